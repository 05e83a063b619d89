package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Dialect names the database a store runs on.
type Dialect string

// The two supported databases.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Pool limits. SQLite's page cache is per connection and every partition has its own pool
// (decisions §13): 4 connections per partition kept credo under 80 MiB with three 100,000-row
// partitions at the throughput of 8 (BENCHMARKS.md).
// On PostgreSQL, database/sql (GORM's statements) keeps at most postgresIdleSQLConns of the
// pool's connections idle for itself; the rest stay in the pool for the planned statements.
const (
	sqliteMaxConns       = 4
	postgresMaxConns     = 32
	postgresIdleSQLConns = 4
)

// partitionRe is the form of a partition slug: it becomes a file name or a schema name.
var partitionRe = regexp.MustCompile(`^[a-z][a-z0-9]{0,30}$`)

// ValidPartition reports whether slug can name a partition.
func ValidPartition(slug string) bool { return partitionRe.MatchString(slug) }

// Database is the opened storage of every configured partition: one SQLite file each, or one
// PostgreSQL pool with one schema each.
type Database struct {
	Dialect Dialect
	stores  map[string]*Store
	order   []string
	closers []func() error
}

// Open opens (creating when needed) the storage at url for the partitions and migrates every
// partition's schema. url is `sqlite:DIR` or `postgres://…`.
func Open(ctx context.Context, url string, partitions []string, reg *Registry) (*Database, error) {
	if len(partitions) == 0 {
		return nil, fmt.Errorf("engine: no partitions configured")
	}
	for _, p := range partitions {
		if !ValidPartition(p) {
			return nil, fmt.Errorf("engine: partition %q must be lower-case letters and digits, starting with a letter", p)
		}
	}
	d := &Database{stores: map[string]*Store{}, order: partitions}
	cfg := &gorm.Config{
		Logger:                 logger.Default.LogMode(logger.Silent),
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		d.Dialect = SQLite
		dir := strings.TrimPrefix(url, "sqlite:")
		if dir == "" {
			dir = "."
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("engine: create data folder: %w", err)
		}
		for _, p := range partitions {
			dsn := filepath.Join(dir, p+".db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
				"&_pragma=synchronous(NORMAL)&_txlock=immediate"
			db, err := gorm.Open(sqlite.Open(dsn), cfg)
			if err != nil {
				d.Close()
				return nil, fmt.Errorf("engine: open sqlite %s: %w", dsn, err)
			}
			sqlDB, _ := db.DB()
			sqlDB.SetMaxOpenConns(sqliteMaxConns)
			sqlDB.SetMaxIdleConns(sqliteMaxConns)
			d.closers = append(d.closers, sqlDB.Close)
			d.stores[p] = &Store{Partition: p, db: db, dialect: SQLite, reg: reg, plans: &planCache{}}
		}
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		d.Dialect = Postgres
		// One pgx pool serves both the hot planned statements (directly) and GORM (through
		// database/sql over the same pool), so the connection limit holds for both.
		pcfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			return nil, fmt.Errorf("engine: postgres url: %w", err)
		}
		pcfg.MaxConns = postgresMaxConns
		pcfg.MaxConnIdleTime = 5 * time.Minute
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return nil, fmt.Errorf("engine: open postgres: %w", err)
		}
		sqlDB := stdlib.OpenDBFromPool(pool)
		sqlDB.SetMaxOpenConns(postgresMaxConns)
		sqlDB.SetMaxIdleConns(postgresIdleSQLConns)
		d.closers = append(d.closers, sqlDB.Close, func() error { pool.Close(); return nil })
		db, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), cfg)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("engine: open postgres: %w", err)
		}
		for _, p := range partitions {
			d.stores[p] = &Store{Partition: p, db: db, pool: pool, schema: p, dialect: Postgres, reg: reg, plans: &planCache{}}
		}
	default:
		return nil, fmt.Errorf("engine: database %q must start with sqlite: or postgres://", url)
	}
	for _, p := range partitions {
		if err := d.stores[p].Migrate(ctx); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// Store returns the store of a configured partition.
func (d *Database) Store(partition string) (*Store, bool) {
	s, ok := d.stores[partition]
	return s, ok
}

// Partitions lists the configured partitions in configuration order.
func (d *Database) Partitions() []string { return d.order }

// Close closes every pool.
func (d *Database) Close() error {
	var first error
	for _, c := range d.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Store serves the records of one partition. Every table name it uses is qualified by the
// partition (its own SQLite file, or its PostgreSQL schema), so no query can reach another
// partition's rows.
type Store struct {
	Partition string
	db        *gorm.DB
	schema    string
	dialect   Dialect
	reg       *Registry
	plans     *planCache
	// pool runs planned statements on PostgreSQL; nil on SQLite and in transactions.
	pool *pgxpool.Pool
}

// Registry returns the resources the store serves.
func (s *Store) Registry() *Registry { return s.reg }

// Dialect returns the store's database kind.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB returns a GORM handle for hand-written modules (v1, platform, compliance). Modules must
// name tables through Table so that they stay inside the partition.
func (s *Store) DB(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

// Table returns the partition-qualified, quoted name of a resource's table, for SQL text.
func (s *Store) Table(r *Resource) string { return s.qualify(r.Table) }

// TableName returns the partition-qualified, unquoted name (`schema.table` on PostgreSQL) for
// GORM's Table method, which quotes it.
func (s *Store) TableName(r *Resource) string {
	if s.schema == "" {
		return r.Table
	}
	return s.schema + "." + r.Table
}

func (s *Store) qualify(table string) string {
	if s.schema == "" {
		return quote(table)
	}
	return quote(s.schema) + "." + quote(table)
}

// Ping checks that the partition's database answers within ctx.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("engine: ping %s: %w", s.Partition, err)
	}
	var one int
	if err := sqlDB.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("engine: ping %s: %w: %v", s.Partition, ErrUnavailable, err)
	}
	return nil
}

// quote quotes an identifier that the descriptor loader already restricted to [a-z0-9_].
func quote(ident string) string { return `"` + ident + `"` }
