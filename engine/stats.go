package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PoolStats is a snapshot of one connection pool, in the terms of both drivers: a pgxpool
// (PostgreSQL, shared by every partition) or a database/sql pool (SQLite, one per partition).
type PoolStats struct {
	// Pool names the pool: the partition slug on SQLite, "postgres" for the shared pool (with
	// partitions placed on several databases, "postgres:" and the pool's partitions, e.g.
	// "postgres:e01,e03").
	Pool string
	// Max is the most connections the pool opens.
	Max int
	// InUse and Idle are the connections serving a statement and those waiting for one.
	InUse, Idle int
	// Waits counts the acquisitions that found no idle connection and had to wait (or open
	// one), since the pool opened; WaitTime is the time they spent waiting.
	Waits    int64
	WaitTime time.Duration
}

// Stats returns a snapshot of every pool of the database, in partition order.
func (d *Database) Stats() []PoolStats {
	if len(d.subs) > 0 {
		var out []PoolStats
		for _, sub := range d.subs {
			for _, st := range sub.Stats() {
				if sub.Dialect == Postgres {
					st.Pool = string(Postgres) + ":" + strings.Join(sub.order, ",")
				}
				out = append(out, st)
			}
		}
		return out
	}
	if d.Dialect == Postgres {
		if len(d.order) == 0 {
			return nil
		}
		s := d.stores[d.order[0]]
		st := s.pool.Stats()
		out := PoolStats{Pool: string(Postgres), Max: st.Max, InUse: st.InUse, Idle: st.Idle, Waits: st.Waits, WaitTime: st.WaitTime}
		// database/sql (GORM's statements) keeps connections it acquired from the pool idle
		// for itself: those are idle, not in use.
		if sqlDB, err := s.db.DB(); err == nil {
			held := min(sqlDB.Stats().Idle, out.InUse)
			out.InUse, out.Idle = out.InUse-held, out.Idle+held
		}
		return []PoolStats{out}
	}
	out := make([]PoolStats, 0, len(d.order))
	for _, p := range d.order {
		out = append(out, d.stores[p].sqlite.stats(p))
	}
	return out
}

// Ready reports whether the partition can serve: its database answers within ctx and holds
// every table of the registry (a schema dropped or never migrated is not ready). Like Ping it
// runs on the connection apart from the request pool, so a busy pool does not make it fail. The
// error names what is missing; it wraps ErrUnavailable when the database does not answer.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.Ping(ctx); err != nil {
		return err
	}
	var tables []string
	seen := map[string]bool{}
	for _, r := range s.reg.Resources() {
		if !seen[r.Table] {
			seen[r.Table] = true
			tables = append(tables, r.Table)
		}
	}
	args := make([]any, 0, len(tables)+1)
	q := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ("
	if s.dialect == Postgres {
		q = "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ("
		args = append(args, s.schema)
	}
	for i, t := range tables {
		if i > 0 {
			q += ", "
		}
		args = append(args, t)
		if s.dialect == Postgres {
			q += "$" + strconv.Itoa(len(args))
		} else {
			q += "?"
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var n int
	var err error
	if s.dialect == Postgres {
		var n64 int64
		err = s.database.probe.Count(ctx, q+")", args, &n64)
		n = int(n64)
	} else {
		err = s.sqliteProbe.QueryRowContext(ctx, q+")", args...).Scan(&n)
	}
	if err != nil {
		return fmt.Errorf("engine: ready %s: %w: %v", s.Partition, ErrUnavailable, err)
	}
	if n != len(tables) {
		return fmt.Errorf("engine: ready %s: %d of %d tables exist; the partition is not migrated", s.Partition, n, len(tables))
	}
	return nil
}
