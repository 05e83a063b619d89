package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// refusalWindow is how long a refused connection attempt of the request pool keeps Ping
// failing when no attempt has succeeded since: long enough for probes a few seconds apart
// to see it, short enough that a database that accepts connections again is healthy soon.
const refusalWindow = 5 * time.Second

// Ping reports whether the partition's database answers, within ctx and the store's timeout.
// It runs on a connection of its own, apart from the pool that serves requests: a pool whose
// every connection is serving a request (and others are waiting) is busy, not down, and must
// not make health checks and readiness probes fail. On PostgreSQL a database that refused one
// of the request pool's connection attempts (too many clients, shutting down, starting up)
// within refusalWindow, with none accepted since, fails Ping too: requests are then answered
// 503. The error wraps ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var err error
	if s.dialect == Postgres {
		d := s.database
		err = d.probe.Ping(ctx)
		if err == nil {
			err = d.refusals.recent(refusalWindow)
		}
	} else {
		var n int
		err = s.sqliteProbe.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n)
	}
	if err != nil {
		return fmt.Errorf("engine: ping %s: %w: %v", s.Partition, ErrUnavailable, err)
	}
	return nil
}

// openPostgresProbe opens the one-connection pool that answers Ping on PostgreSQL. Open
// connects it before serving, and the pool keeps it open (MinConns), so that it holds its
// place among the server's max_connections before the request pool takes them all.
func openPostgresProbe(url string, timeout time.Duration) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("engine: postgres url: %w", err)
	}
	cfg.MaxConns, cfg.MinConns = 1, 1
	cfg.ConnConfig.ConnectTimeout = timeout
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("engine: open postgres probe: %w", err)
	}
	return pool, nil
}

// openSQLiteProbe opens the one-connection handle that answers Ping on a SQLite file, with a
// small page cache: it reads only the schema page.
func openSQLiteProbe(path string, timeout time.Duration) (*sql.DB, error) {
	db, err := sql.Open("sqlite", path+fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=cache_size(-64)", timeout.Milliseconds()))
	if err != nil {
		return nil, fmt.Errorf("engine: open sqlite probe %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
}

// refusals remembers the request pool's last refused connection attempt, until an attempt
// succeeds.
type refusals struct {
	last atomic.Pointer[refusal]
}

type refusal struct {
	at  time.Time
	err error
}

// note records the outcome of a connection attempt.
func (r *refusals) note(err error) {
	switch {
	case err == nil:
		if r.last.Load() != nil {
			r.last.Store(nil)
		}
	case refused(err):
		r.last.Store(&refusal{at: time.Now(), err: err})
	}
}

// recent returns the last refusal when it is younger than window.
func (r *refusals) recent(window time.Duration) error {
	if last := r.last.Load(); last != nil && time.Since(last.at) < window {
		return fmt.Errorf("the database refused a connection %v ago: %w", time.Since(last.at).Round(time.Millisecond), last.err)
	}
	return nil
}

// refused reports whether err is PostgreSQL refusing a connection or a statement for lack of
// resources (class 53: too many clients, out of memory, disk full, configuration limits) or
// because it is stopping or starting (57P01 admin shutdown, 57P02 crash shutdown, 57P03
// cannot connect now, 57P04 database dropped, 57P05 idle session timeout).
func refused(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	return len(pgErr.Code) == 5 && (pgErr.Code[:2] == "53" || pgErr.Code[:4] == "57P0")
}
