package postgres

import (
	"context"
	"time"

	"credo/engine/backend"
)

// Exported for the postgres_test package only.

// OpenRequestPool opens the request pool as the engine does, and closes its probe.
func OpenRequestPool(url string, maxConns int, timeout time.Duration) (backend.Pool, error) {
	p, probe, err := driver{}.Open(url, maxConns, timeout)
	if err != nil {
		return nil, err
	}
	probe.Close()
	return p, nil
}

// LeaveDeadline takes a connection from p's pool, sets deadline on its socket, as a statement
// whose end pgx did not report would leave it, and puts the connection back. It returns the
// connection's backend process id.
func LeaveDeadline(ctx context.Context, p backend.Pool, deadline time.Time) (uint32, error) {
	c, err := p.(*pool).pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Release()
	pid := c.Conn().PgConn().PID()
	return pid, c.Conn().PgConn().Conn().SetDeadline(deadline)
}

// DescriptionCacheCapacity is the description cache capacity the pools' connections get for url.
func DescriptionCacheCapacity(url string) (int, error) {
	cfg, err := parseConfig(url, time.Second)
	if err != nil {
		return 0, err
	}
	return cfg.ConnConfig.DescriptionCacheCapacity, nil
}
