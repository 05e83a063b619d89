package engine

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"credo/engine/backend"
)

// Ping reports whether the partition's database answers, within ctx and the store's timeout.
// It runs on a connection of its own, apart from the pool that serves requests: a pool whose
// every connection is serving a request (and others are waiting) is busy, not down, and must
// not make health checks and readiness probes fail. On PostgreSQL a database that refused one
// of the request pool's connection attempts (too many clients, shutting down, starting up)
// within the last seconds (backend.Pool.Refusal), with none accepted since, fails Ping too:
// requests are then answered 503. The error wraps ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var err error
	if s.dialect == Postgres {
		d := s.database
		err = d.probe.Ping(ctx)
		if err == nil {
			err = d.pool.Refusal()
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

// openSQLiteProbe opens the one-connection handle that answers Ping on a SQLite file, with a
// small page cache: it reads only the schema page.
func openSQLiteProbe(path string, timeout time.Duration) (*sql.DB, error) {
	db, err := sql.Open(backend.LinkedSQLite().Driver(), path+fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=cache_size(-64)", timeout.Milliseconds()))
	if err != nil {
		return nil, fmt.Errorf("engine: open sqlite probe %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
}
