package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"credo/engine/backend"
	"credo/internal/dsn"
)

// Dialect names the database a store runs on.
type Dialect string

// The two supported databases.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Default limits. SQLite's page cache is per connection and every partition has its own pool
// (decisions §13): 4 connections per partition kept credo under 80 MiB with three 100,000-row
// partitions at the throughput of 8 (BENCHMARKS.md). On PostgreSQL one pool serves every
// partition.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMigrationTimeout = time.Hour
	DefaultSQLiteMaxConns   = 4
	DefaultPostgresMaxConns = 32
)

// partitionRe is the form of a partition slug: it becomes a file name or a schema name.
var partitionRe = regexp.MustCompile(`^[a-z][a-z0-9]{0,30}$`)

// ValidPartition reports whether slug can name a partition.
func ValidPartition(slug string) bool { return partitionRe.MatchString(slug) }

// Limits bound what a Database takes from its database server and how long it waits for it.
type Limits struct {
	// Timeout bounds every statement and every wait for a pooled connection (PostgreSQL), a
	// wait for a lock (SQLite's busy timeout), each connection attempt, and the start-up of
	// each partition (connect and migrate). Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxConns is the size of the PostgreSQL pool that every partition shares (plus one
	// connection for Ping), or of each SQLite partition's read pool (plus its one writer
	// connection and one for Ping). Zero means
	// DefaultPostgresMaxConns or DefaultSQLiteMaxConns.
	MaxConns int
	// MigrationTimeout bounds, on PostgreSQL, each index that a migration builds on a table
	// that exists (CREATE INDEX CONCURRENTLY, after the migration's transaction; see
	// buildIndexes), with the check for values a unique one refuses, and the wait for
	// another process's migration of the partition, which may be building one: work that
	// grows with the tables, which Timeout, the bound of every request's statements, cannot
	// cover. Zero means DefaultMigrationTimeout. SQLite ignores it.
	MigrationTimeout time.Duration
}

func (l Limits) withDefaults(d Dialect) (Limits, error) {
	if l.Timeout < 0 || l.MaxConns < 0 || l.MigrationTimeout < 0 {
		return l, fmt.Errorf("engine: limits must not be negative (timeout %v, max conns %d, migration timeout %v)", l.Timeout, l.MaxConns, l.MigrationTimeout)
	}
	// The databases take their timeouts in whole milliseconds, where 0 is no limit: a
	// positive timeout under a millisecond would silently turn into none.
	for _, t := range []time.Duration{l.Timeout, l.MigrationTimeout} {
		if t > 0 && t < time.Millisecond {
			return l, fmt.Errorf("engine: timeouts must be at least 1ms (timeout %v, migration timeout %v): the databases count whole milliseconds, and 0 is no limit", l.Timeout, l.MigrationTimeout)
		}
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MigrationTimeout == 0 {
		l.MigrationTimeout = DefaultMigrationTimeout
	}
	if l.MaxConns == 0 {
		l.MaxConns = DefaultSQLiteMaxConns
		if d == Postgres {
			l.MaxConns = DefaultPostgresMaxConns
		}
	}
	return l, nil
}

// Database is the opened storage of every configured partition: one SQLite file each, or one
// PostgreSQL pool with one schema each.
type Database struct {
	Dialect Dialect
	stores  map[string]*Store
	order   []string
	closers []func() error
	limits  Limits
	// pool is the request pool on PostgreSQL (its refused connection attempts fail Ping);
	// probe answers Ping, apart from it.
	pool, probe backend.Pool
	// subs are the databases a Database opened by OpenPlaced combines, one per server.
	subs []*Database
}

// Open opens (creating when needed) the storage at url for the partitions and migrates every
// partition's schema, with the default Limits. url is `sqlite:DIR` or `postgres://…`.
func Open(ctx context.Context, url string, partitions []string, reg *Registry) (*Database, error) {
	return Limits{}.Open(ctx, url, partitions, reg)
}

// Open opens the storage like the package's Open, within the limits l. Connecting, and each
// statement of a partition's migration, must end within l.Timeout: a database that does not
// answer fails start-up with an error naming the partition and the database. The timeout
// bounds each step, not the migration as a whole, whose work grows with the tables: on
// PostgreSQL an index built on a table that exists, and the wait for another process's
// migration, are bounded by l.MigrationTimeout instead. A cancelled ctx
// stops start-up at once. A failed Open closes what it opened in the background: a connection
// attempt to a database that does not answer ends only at its timeout.
func (l Limits) Open(ctx context.Context, url string, partitions []string, reg *Registry) (*Database, error) {
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
		// GORM's ping at open has no deadline and ignores ctx; the migration connects instead.
		DisableAutomaticPing: true,
	}
	var err error
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		d.Dialect = SQLite
		if d.limits, err = l.withDefaults(SQLite); err != nil {
			return nil, err
		}
		err = d.openSQLite(strings.TrimPrefix(url, "sqlite:"), cfg, reg)
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		d.Dialect = Postgres
		if d.limits, err = l.withDefaults(Postgres); err != nil {
			return nil, err
		}
		err = d.openPostgres(url, cfg, reg)
	default:
		return nil, fmt.Errorf("engine: database %q must start with sqlite: or postgres://", Redact(url))
	}
	if err != nil {
		go d.Close()
		return nil, err
	}
	for _, p := range partitions {
		if err := d.start(ctx, d.stores[p], url); err != nil {
			go d.Close()
			return nil, err
		}
	}
	if d.probe != nil {
		pctx, cancel := context.WithTimeout(ctx, d.limits.Timeout)
		defer cancel()
		if err := d.probe.Ping(pctx); err != nil {
			go d.Close()
			return nil, fmt.Errorf("engine: %s: the connection that answers health checks: %w", Redact(url), err)
		}
	}
	return d, nil
}

// timedOut reports whether err is a wait that reached its deadline (a connection attempt or a
// statement), rather than a refusal.
func timedOut(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()
}

// start connects and migrates one partition.
func (d *Database) start(ctx context.Context, s *Store, url string) error {
	err := s.Migrate(ctx)
	if err == nil {
		return nil
	}
	unavailable := errors.Is(translate(s, nil, err), ErrUnavailable)
	switch {
	case ctx.Err() != nil:
		// The migration's error says what the interruption stopped (an index build, and
		// whether PostgreSQL confirmed it; see Store.interrupted).
		return fmt.Errorf("engine: start-up of partition %s on %s interrupted (%w): %w", s.Partition, Redact(url), ctx.Err(), err)
	case unavailable && s.dialect == SQLite && strings.Contains(err.Error(), "SQLITE_BUSY"):
		// busy_timeout ran out: the file is there and answers, another process writes it.
		wrap(&err, "partition", fmt.Sprintf("%s on %s: another process (credo load, seed or secret, or a serve) held the partition's file for writing for more than %v", s.Partition, Redact(url), d.limits.Timeout), nil)
		return err
	case unavailable && timedOut(err):
		wrap(&err, "partition", fmt.Sprintf("%s on %s: the database did not connect or answer within %v", s.Partition, Redact(url), d.limits.Timeout), nil)
		return err
	case unavailable:
		// Refused or cut at once: the cause that follows says which; no wait was involved.
		wrap(&err, "partition", s.Partition+" on "+Redact(url)+": the database is unavailable", nil)
		return err
	}
	wrap(&err, "partition", s.Partition+" on "+Redact(url), nil)
	return err
}

func (d *Database) openSQLite(dir string, cfg *gorm.Config, reg *Registry) error {
	if err := linkSQLite(dir); err != nil {
		return err
	}
	if dir == "" {
		dir = "."
	}
	if err := dataFolder(dir); err != nil {
		return err
	}
	for _, p := range d.order {
		if _, err := os.Stat(filepath.Join(dir, p+".db")); errors.Is(err, fs.ErrNotExist) {
			slog.Info("engine: the partition has no SQLite file yet; creating it", "partition", p, "file", absPath(filepath.Join(dir, p+".db")))
		}
		pool, err := openSQLitePool(filepath.Join(dir, p+".db"), d.limits.MaxConns, d.limits.Timeout)
		if err != nil {
			return fmt.Errorf("engine: open sqlite %s: %w", filepath.Join(dir, p+".db"), err)
		}
		d.closers = append(d.closers, pool.Close)
		db, err := gorm.Open(sqliteDialector{pool: pool}, cfg)
		if err != nil {
			return fmt.Errorf("engine: open sqlite %s: %w", filepath.Join(dir, p+".db"), err)
		}
		probe, err := openSQLiteProbe(filepath.Join(dir, p+".db"), d.limits.Timeout)
		if err != nil {
			return err
		}
		d.closers = append(d.closers, probe.Close)
		d.stores[p] = &Store{Partition: p, db: db, dialect: SQLite, reg: reg, plans: &planCache{}, drift: &driftCheck{},
			timeout: d.limits.Timeout, sqliteProbe: probe, sqlite: pool, writers: contentWriters(d.limits.MaxConns)}
	}
	return nil
}

// dataFolder makes sure that dir, the folder of sqlite:DIR, is a folder: it creates it when its
// parent exists (./data on a first run), and logs that it did. A missing parent is a mistyped
// or unmounted path rather than a place to start empty databases in: an error naming it.
func dataFolder(dir string) error {
	err := os.Mkdir(dir, 0o750)
	switch {
	case err == nil:
		slog.Info("engine: created the SQLite data folder", "folder", absPath(dir))
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("engine: SQLite data folder %s: its parent folder %s does not exist; create it (or mount it), or correct the sqlite: path",
			dir, filepath.Dir(filepath.Clean(dir)))
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("engine: create the SQLite data folder: %w", err)
	}
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("engine: SQLite data folder: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("engine: SQLite data folder %s is not a directory", dir)
	}
	return nil
}

// absPath returns path made absolute for a log line, or path when it cannot be.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func (d *Database) openPostgres(url string, cfg *gorm.Config, reg *Registry) error {
	pg := backend.LinkedPostgres()
	if pg == nil {
		return fmt.Errorf("engine: database %q is PostgreSQL, and this program links no PostgreSQL driver: it must import _ %q", Redact(url), "credo/engine/postgres")
	}
	pool, probe, err := pg.Open(url, d.limits.MaxConns, d.limits.Timeout)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	d.pool, d.probe = pool, probe
	d.closers = append(d.closers, func() error { pool.Close(); return nil }, func() error { probe.Close(); return nil })
	sqlDB := pool.SQL()
	// database/sql closes first: it returns its idle connections to the pool.
	d.closers = append([]func() error{sqlDB.Close}, d.closers...)
	db, err := gorm.Open(pg.Dialector(pgConnPool{sqlDB}), cfg)
	if err != nil {
		return fmt.Errorf("engine: open postgres: %w", err)
	}
	writers := contentWriters(d.limits.MaxConns)
	for _, p := range d.order {
		d.stores[p] = &Store{Partition: p, db: db, pool: pool, schema: p, dialect: Postgres, reg: reg,
			plans: &planCache{}, drift: &driftCheck{}, timeout: d.limits.Timeout, migrationTimeout: d.limits.MigrationTimeout, database: d, writers: writers}
	}
	return nil
}

// Limits returns the limits the database was opened with, defaults filled in.
func (d *Database) Limits() Limits { return d.limits }

// Store returns the store of a configured partition.
func (d *Database) Store(partition string) (*Store, bool) {
	s, ok := d.stores[partition]
	return s, ok
}

// Partitions lists the configured partitions in configuration order.
func (d *Database) Partitions() []string { return d.order }

// Close closes every pool. It waits for statements in progress, which end within the timeout,
// then for the connections to close, at most for the timeout: closing a connection to a
// PostgreSQL that does not answer can take pgx 15 s, which a shutdown cannot wait. The error
// then says so, and the connections finish closing in the background.
func (d *Database) Close() error {
	done := make(chan error, 1)
	go func() {
		var first error
		for _, c := range d.closers {
			if err := c(); err != nil && first == nil {
				first = err
			}
		}
		done <- first
	}()
	timeout := d.limits.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("engine: close: connections still closing after %v (the database does not answer)", timeout)
	}
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
	pool backend.Pool
	// inTx is set on the store that Transaction hands to its function.
	inTx bool
	// timeout bounds each statement (Limits.Timeout).
	timeout time.Duration
	// migrationTimeout bounds each index build of a PostgreSQL migration and its wait for
	// another process's (Limits.MigrationTimeout).
	migrationTimeout time.Duration
	// database is the database the store belongs to (PostgreSQL: its probe and request pool).
	database *Database
	// sqliteProbe answers Ping on SQLite, apart from the partition's pool.
	sqliteProbe *sql.DB
	// sqlite is the partition's read pool and writer (SQLite).
	sqlite *sqlitePool
	// writers bounds the content writes of the pool (see contentWriters); shared by the
	// stores of one pool.
	writers chan struct{}
	// drift is the last check of the partition's tables after a statement named a table or
	// column that does not exist (see notMigrated).
	drift *driftCheck
}

// Registry returns the resources the store serves.
func (s *Store) Registry() *Registry { return s.reg }

// Dialect returns the store's database kind.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB returns a GORM handle for hand-written modules (v1, platform, compliance). Modules must
// name tables through Table so that they stay inside the partition. Its statements run like
// the engine's own (see detach): each within the store's timeout, whatever happens to ctx.
func (s *Store) DB(ctx context.Context) *gorm.DB { return s.db.WithContext(s.detach(ctx)) }

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

// quote quotes an identifier that the descriptor loader already restricted to [a-z0-9_].
func quote(ident string) string { return `"` + ident + `"` }

// Redact hides the password of a database URL, for messages and logs.
func Redact(raw string) string { return dsn.Redact(raw) }
