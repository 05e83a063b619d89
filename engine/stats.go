package engine

import (
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
