package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	gormpg "gorm.io/driver/postgres"
	"gorm.io/gorm"

	"credo/engine/backend"
)

func init() { backend.RegisterPostgres(driver{}) }

// driver is the PostgreSQL driver the engine uses (backend.Postgres).
type driver struct{}

// Open opens the request pool and the probe. One pgx pool serves both the hot planned
// statements (directly) and GORM (through database/sql over the same pool, Pool.SQL), so the
// connection limit holds for both. database/sql keeps no connection of its own (pgx's
// default for a pool-backed database/sql): idle connections it held were taken from the
// planned statements — with a small pool, all of them — and its check of a reused one is a
// ping without a deadline. It has no limit either: a statement queues only in the pool,
// where the tracer bounds the wait.
func (driver) Open(url string, maxConns int, timeout time.Duration) (backend.Pool, backend.Pool, error) {
	cfg, err := parseConfig(url, timeout)
	if err != nil {
		return nil, nil, err
	}
	p := &pool{refusals: &refusals{}}
	cfg.MaxConns = int32(maxConns)
	cfg.MaxConnIdleTime = 5 * time.Minute
	tr := &tracer{timeout: timeout, refusals: p.refusals}
	cfg.ConnConfig.Tracer = tr
	cfg.ConnConfig.BuildContextWatcherHandler = newCancelHandler
	session := requestSession(backend.LockTimeout(timeout))
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if err := checkEncoding(ctx, c); err != nil {
			return err
		}
		return session(ctx, c)
	}
	if p.pool, err = pgxpool.NewWithConfig(context.Background(), cfg); err != nil {
		return nil, nil, fmt.Errorf("open postgres: %w", err)
	}
	tr.pool.Store(p.pool)
	p.sql = stdlib.OpenDBFromPool(p.pool)
	probe, err := openProbe(url, timeout)
	if err != nil {
		go p.pool.Close()
		return nil, nil, err
	}
	return p, probe, nil
}

// openProbe opens the one-connection pool that answers Ping. It connects before serving, and
// the pool keeps it open (MinConns), so that it holds its place among the server's
// max_connections before the request pool takes them all.
func openProbe(url string, timeout time.Duration) (*pool, error) {
	cfg, err := parseConfig(url, timeout)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns, cfg.MinConns = 1, 1
	cfg.AfterConnect = readCommitted
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres probe: %w", err)
	}
	return &pool{pool: p}, nil
}

// parseConfig parses a pool's URL and sets what both pools share: the connect timeout, and no
// description cache unless the URL asks for the exec mode that reads it. pgx gives every
// connection two caches of 512 statements (statement_cache_capacity and
// description_cache_capacity), each a map made for its capacity up front, about 40 KiB a
// connection; the description cache serves only default_query_exec_mode=cache_describe (the
// mode for a pooler that cannot keep prepared statements). In the default mode it is never
// read, yet on a pool of 32 it was 1.3 MiB of the process's 7 MiB live heap, which every
// garbage collection marks.
func parseConfig(url string, timeout time.Duration) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres url: %w", err)
	}
	cfg.ConnConfig.ConnectTimeout = timeout
	if cfg.ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheDescribe {
		cfg.ConnConfig.DescriptionCacheCapacity = 0
	}
	return cfg, nil
}

func (driver) Dialector(conn gorm.ConnPool) gorm.Dialector {
	return gormpg.New(gormpg.Config{Conn: conn})
}

func (driver) CopyFrom(ctx context.Context, conn any, schema, table string, cols []string, src backend.CopySource) (int64, error) {
	c, ok := conn.(*stdlib.Conn)
	if !ok {
		return 0, fmt.Errorf("the connection is not pgx's (%T)", conn)
	}
	return c.Conn().CopyFrom(ctx, pgx.Identifier{schema, table}, cols, src)
}

func (driver) Classify(err error) backend.Error {
	var e backend.Error
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		e.Code, e.Constraint, e.Message = pgErr.Code, pgErr.ConstraintName, pgErr.Message
	}
	var connErr *pgconn.ConnectError
	e.ConnectFailed = errors.As(err, &connErr)
	e.Closed = errors.Is(err, pgconn.ErrConnClosed)
	return e
}

// pool is a pgx pool (backend.Pool); refusals and sql are nil on the probe.
type pool struct {
	pool     *pgxpool.Pool
	refusals *refusals
	sql      *sql.DB
}

func (p *pool) Query(ctx context.Context, done context.CancelFunc, sql string, args []any) (backend.Rows, error) {
	rows, err := p.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return rowSet{Rows: rows, done: done}, nil
}

func (p *pool) Count(ctx context.Context, sql string, args []any, n *int64) error {
	return p.pool.QueryRow(ctx, sql, args...).Scan(n)
}

func (p *pool) Exec(ctx context.Context, sql string, args []any) (int64, error) {
	tag, err := p.pool.Exec(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (p *pool) SendPage(ctx context.Context, done context.CancelFunc, pageSQL string, pageArgs []any, countSQL string, countArgs []any) (backend.Page, backend.Rows, error) {
	b := &pgx.Batch{}
	b.Queue(pageSQL, pageArgs...)
	b.Queue(countSQL, countArgs...)
	pb := &page{br: p.pool.SendBatch(ctx, b), done: done}
	rows, err := pb.br.Query()
	if err != nil {
		pb.End() // the batch's error is err
		return nil, nil, err
	}
	return pb, rowSet{Rows: rows, done: func() {}}, nil
}

func (p *pool) Ping(ctx context.Context) error { return p.pool.Ping(ctx) }

// refusalWindow is how long a refused connection attempt of the request pool keeps Ping
// failing when no attempt has succeeded since: long enough for probes a few seconds apart
// to see it, short enough that a database that accepts connections again is healthy soon.
const refusalWindow = 5 * time.Second

func (p *pool) Refusal() error {
	if p.refusals == nil {
		return nil
	}
	return p.refusals.recent(refusalWindow)
}

// SQL returns database/sql over the request pool; nil on the probe.
func (p *pool) SQL() *sql.DB { return p.sql }

func (p *pool) Stats() backend.Stats {
	st := p.pool.Stat()
	return backend.Stats{Max: int(st.MaxConns()), InUse: int(st.AcquiredConns()), Idle: int(st.IdleConns()),
		Acquires: st.AcquireCount(), Waits: st.EmptyAcquireCount(), WaitTime: st.EmptyAcquireWaitTime()}
}

func (p *pool) Close() { p.pool.Close() }

// rowSet gives pgx.Rows the Close of database/sql, which also ends the statement's deadline.
type rowSet struct {
	pgx.Rows
	done context.CancelFunc
}

func (r rowSet) Close() error {
	r.Rows.Close()
	r.done()
	return r.Rows.Err()
}

// page is a page's statement and its count's, sent together: one round trip, one write and
// one read on each side, where the two statements took two (a list with its total is the
// most frequent read after a get).
type page struct {
	br   pgx.BatchResults
	done context.CancelFunc
}

func (b *page) Total() (int64, error) {
	var n int64
	err := b.br.QueryRow().Scan(&n)
	if cerr := b.End(); err == nil {
		err = cerr
	}
	return n, err
}

func (b *page) End() error {
	err := b.br.Close()
	b.done()
	return err
}
