package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"gorm.io/gorm"

	"credo/engine/backend"
)

// Index builds on PostgreSQL. An index that a release adds to a table that exists (a new
// filterable or sortable member, a new unique constraint, a content table's index) is built
// with CREATE [UNIQUE] INDEX CONCURRENTLY once the migration's transaction has committed: a
// plain CREATE INDEX holds a SHARE lock on the table, which stopped every serving replica's
// writes to it for the whole build, and was one statement bounded by the request timeout, so
// that a release could not start on a table of millions of rows. A concurrent build lets
// writes through; it costs two scans of the table instead of one, cannot run in a transaction,
// and waits, before each scan and before it ends, for the transactions that could use the
// table or hold an older snapshot (a long export, a credo load). It is not atomic with the
// transaction's column changes: a start-up that dies between them leaves the columns without
// the index, which the next start-up builds.
//
// A build that does not finish (cancelled, its process killed, a duplicate value written
// meanwhile for a unique index) leaves an INVALID index: the next start-up drops it (DROP
// INDEX CONCURRENTLY) and builds it again; "IF NOT EXISTS" would have taken it as built.
//
// Processes migrating the partition together wait for each other on the partition's advisory
// lock, held by the migration's session for its transaction and its builds. They wait by
// polling it (pg_try_advisory_lock), never in a statement: a session waiting in
// pg_advisory_lock holds a snapshot, which the holder's concurrent build waits for, while it
// waits for the holder's lock: a deadlock (flyway#1654, golang-migrate#960).

// migrationLockPoll is how often a migration tries the advisory lock that another process's
// migration holds.
const migrationLockPoll = 200 * time.Millisecond

// migrationSlowEvery is how often a migration logs a warning while an index build, or its
// wait for another process's migration, goes on.
const migrationSlowEvery = 30 * time.Second

// onMigrationConn runs fn with a store bound to one connection of the pool, taken for the
// migration, once that connection holds the partition's advisory lock (see lockMigration): the
// session's lock and the settings of its builds hold only on the connection that took them,
// and each CREATE INDEX CONCURRENTLY must run there, outside any transaction. It releases the
// lock and the session's settings before the connection goes back to the pool.
func (s *Store) onMigrationConn(ctx context.Context, fn func(c *Store) error) error {
	return s.db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		c := *s
		c.db, c.pool = conn, nil
		if err := c.lockMigration(ctx); err != nil {
			return err
		}
		defer c.releaseMigration(ctx)
		// The session's bounds for the builds and the check before them (see buildIndexes);
		// the transaction sets its own lock_timeout, and the store's timeout bounds its
		// statements in the client.
		db := c.db.WithContext(ctx)
		for _, stmt := range []string{fmt.Sprintf("SET statement_timeout = %d", c.migrationTimeout.Milliseconds()), "SET lock_timeout = 0"} {
			if err := db.Exec(stmt).Error; err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return fn(&c)
	})
}

// lockMigration takes the partition's advisory lock for the session, trying again every
// migrationLockPoll while another process's migration holds it, for at most the migration
// timeout, and warning every migrationSlowEvery with what holds it.
func (s *Store) lockMigration(ctx context.Context) error {
	db := s.db.WithContext(ctx)
	// The key is in the text, so that pg_stat_activity shows which partition a session waits
	// for.
	try := fmt.Sprintf("SELECT pg_try_advisory_lock(%d)", migrationLock(s.schema))
	start, warned := time.Now(), time.Now()
	for {
		var got bool
		if err := db.Raw(try).Scan(&got).Error; err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if got {
			return nil
		}
		waited := time.Since(start)
		if waited >= s.migrationTimeout {
			// Not the database's silence: %v, so that start-up does not report it as such.
			return fmt.Errorf("another process (a replica starting beside this one, credo secret, load or seed) was migrating %s and held its lock for more than %v%s; start again once it is done, or raise --migration-timeout",
				s.Partition, s.migrationTimeout, heldBy(s.migrationLockHolder(ctx)))
		}
		if time.Since(warned) >= migrationSlowEvery {
			warned = time.Now()
			slog.Warn("migration: waiting for another process's migration of the partition", "partition", s.Partition,
				"waited", waited.Round(time.Second), "held_by", s.migrationLockHolder(ctx))
		}
		t := time.NewTimer(min(migrationLockPoll, s.migrationTimeout-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// heldBy is the clause of an error that names the lock's holder, when it is known.
func heldBy(holder string) string {
	if holder == "" {
		return ""
	}
	return "; held by " + holder
}

// migrationLockHolder describes the session that holds the partition's advisory lock: its
// process id, application and what it runs (an index build names its index). Best effort: ""
// when it cannot be read.
func (s *Store) migrationLockHolder(ctx context.Context) string {
	var rows []struct {
		Pid         int
		Application string
		Query       string
	}
	err := s.db.WithContext(ctx).Raw(`SELECT a.pid, coalesce(a.application_name, '') AS application,
		CASE WHEN a.state = 'active' THEN a.query ELSE coalesce(a.state, '') END AS query
		FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND (l.classid::bigint << 32 | l.objid::bigint) = ? LIMIT 1`, migrationLock(s.schema)).Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return ""
	}
	r := rows[0]
	parts := []string{}
	if r.Application != "" {
		parts = append(parts, "application "+r.Application)
	}
	if q := strings.Join(strings.Fields(r.Query), " "); q != "" {
		if len(q) > 200 {
			q = q[:200] + "…"
		}
		parts = append(parts, q)
	}
	return fmt.Sprintf("pid %d (%s)", r.Pid, strings.Join(parts, ", "))
}

// releaseMigration releases the advisory lock and gives the session back the settings of the
// request pool's connections (statement_timeout as the server has it, lock_timeout as
// requestSession in credo/engine/postgres sets it: a RESET would turn it off), on a context
// that a cancelled start-up does not cut (each statement keeps the store's timeout). A
// statement that fails leaves the connection closed, and so its lock released, or the lock held
// by a session the server ends with the process.
func (s *Store) releaseMigration(ctx context.Context) {
	db := s.db.WithContext(context.WithoutCancel(ctx))
	for _, stmt := range []string{"RESET statement_timeout", fmt.Sprintf("SET lock_timeout = %d", backend.LockTimeout(s.timeout).Milliseconds()),
		fmt.Sprintf("SELECT pg_advisory_unlock(%d)", migrationLock(s.schema))} {
		if err := db.Exec(stmt).Error; err != nil {
			slog.Warn("migration: releasing the migration's connection", "partition", s.Partition, "statement", stmt, "error", err.Error())
			return
		}
	}
}

// buildIndexes builds, after the migration's transaction has committed, the indexes that the
// tables existing before it lack (see "Index builds on PostgreSQL" above), one at a time,
// each bounded by the migration timeout rather than by the store's: the session's
// statement_timeout (set by onMigrationConn), which PostgreSQL enforces itself, so that a
// build past it is cancelled in the server (its INVALID index dropped) rather than left
// running there after the client gave up. lock_timeout is off: a concurrent build's waits for
// other transactions stop no serving request (its SHARE UPDATE EXCLUSIVE lock conflicts with
// no read or write), and the migration timeout bounds them.
func (s *Store) buildIndexes(ctx context.Context) error {
	p, err := s.plan(ctx)
	if err != nil || len(p.builds) == 0 {
		return err
	}
	db := s.db.WithContext(ctx)
	var pid int
	if err := db.Raw("SELECT pg_backend_pid()").Scan(&pid).Error; err != nil {
		return fmt.Errorf("index builds: %w", err)
	}
	for _, b := range p.builds {
		if err := s.buildIndex(ctx, b, pid); err != nil {
			return err
		}
	}
	return nil
}

// long runs a statement of an index build: on ctx without the store's deadline (the tracer
// leaves a stream's context as it is), bounded by the session's statement_timeout in the
// server, and by the migration timeout and the store's timeout together in the client, should
// the server not answer.
func (s *Store) long(ctx context.Context, sql string) error {
	lctx, cancel := context.WithTimeout(backend.Stream(ctx), s.migrationTimeout+s.timeout)
	defer cancel()
	return s.db.WithContext(lctx).Exec(sql).Error
}

// buildIndex runs one indexBuild on the migration's connection, whose backend is pid: it drops the
// INVALID index a build left, checks that the records keep unique, builds the index and drops
// the one it replaces, logging each step.
func (s *Store) buildIndex(ctx context.Context, b indexBuild, pid int) error {
	log := slog.With("partition", s.Partition, "table", b.table, "index", b.index)
	if b.invalid {
		log.Warn("migration: an earlier build of the index did not finish and left it INVALID; dropping it to build it again")
		if err := s.long(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+s.qualify(b.index)); err != nil {
			return fmt.Errorf("drop the INVALID index %s of table %s: %w", b.index, b.table, err)
		}
	}
	if b.sql != "" {
		start := time.Now()
		log.Info("migration: building index concurrently; writes to the table go on")
		stop := s.warnWhileBuilding(ctx, log, pid, start)
		err := s.long(ctx, b.sql)
		stop()
		if err != nil {
			return s.buildFailed(ctx, b, err, time.Since(start))
		}
		log.Info("migration: built index", "took", time.Since(start).Round(time.Millisecond))
	}
	if b.drop != "" {
		if err := s.long(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+s.qualify(b.drop)); err != nil {
			return fmt.Errorf("drop index %s of table %s, which %s replaces: %w", b.drop, b.table, b.index, err)
		}
		log.Info("migration: dropped the index it replaces", "dropped", b.drop)
	}
	return nil
}

// warnWhileBuilding logs a warning every migrationSlowEvery while the build on backend pid
// goes on, with its phase and, when it waits for other transactions, the process it waits
// for (pg_stat_progress_create_index), read on the pool. stop ends it.
func (s *Store) warnWhileBuilding(ctx context.Context, log *slog.Logger, pid int, start time.Time) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(migrationSlowEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				attrs := []any{"building_for", time.Since(start).Round(time.Second)}
				attrs = append(attrs, s.database.buildProgress(ctx, pid)...)
				log.Warn("migration: still building index; writes to the table go on", attrs...)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// buildProgress reads the phase of the index build on backend pid, on the pool: best effort,
// nothing when it cannot.
func (d *Database) buildProgress(ctx context.Context, pid int) []any {
	if d == nil || d.pool == nil {
		return nil
	}
	var n int64
	rows, err := d.pool.Query(context.WithoutCancel(ctx), func() {}, `SELECT phase, coalesce(current_locker_pid, 0),
		CASE WHEN blocks_total > 0 THEN 100 * blocks_done / blocks_total ELSE 0 END
		FROM pg_stat_progress_create_index WHERE pid = $1`, []any{pid})
	if err != nil {
		return nil
	}
	defer rows.Close()
	if !rows.Next() {
		return nil
	}
	var phase string
	var locker int64
	if rows.Scan(&phase, &locker, &n) != nil {
		return nil
	}
	attrs := []any{"phase", phase}
	if locker != 0 {
		attrs = append(attrs, "waiting_for_pid", locker)
	} else if n > 0 {
		attrs = append(attrs, "scanned_percent", n)
	}
	return attrs
}

// buildFailed drops the INVALID index that the failed build of b left (best effort: a build
// whose connection was lost leaves it to the next start-up) and returns the migration's error:
// for a unique index that a value written twice broke (SQLSTATE 23505), a *DuplicatesError
// naming the records, as refuseDuplicates does before the build; for a build that outlasted
// the migration timeout (57014), one saying so. A build that a cancelled start-up interrupted
// is left INVALID for the next start-up to drop: the drop waits for the transactions using
// the table, which a process asked to stop must not wait for (see interrupted).
func (s *Store) buildFailed(ctx context.Context, b indexBuild, err error, took time.Duration) error {
	if ctx.Err() != nil {
		return s.interrupted(ctx, b, err, took)
	}
	dropped := "it was dropped"
	derr := s.long(context.WithoutCancel(ctx), "DROP INDEX CONCURRENTLY IF EXISTS "+s.qualify(b.index))
	if derr != nil {
		dropped = fmt.Sprintf("it is left INVALID, and the next start-up drops it (%v)", derr)
	}
	slog.Warn("migration: building index failed", "partition", s.Partition, "table", b.table, "index", b.index,
		"took", took.Round(time.Millisecond), "dropped", derr == nil, "error", err.Error())
	code := ""
	if d := backend.LinkedPostgres(); d != nil {
		code = d.Classify(err).Code
	}
	switch {
	case code == "23505" && b.unique != nil:
		if derr := s.refuseDuplicates(backend.Stream(context.WithoutCancel(ctx)), b.r, *b.unique); derr != nil {
			return derr
		}
		return fmt.Errorf("%s (table %s): cannot create the unique index of %s: a value was held by more than one %s while it was built, by a write of another process, and %s; start again: %v",
			b.r.Name, b.table, b.unique.describe(), b.r.Name, dropped, err)
	case code == "57014" && took >= s.migrationTimeout*9/10:
		return fmt.Errorf("building index %s of table %s took more than %v, and %s; start again with a larger --migration-timeout: %v",
			b.index, b.table, s.migrationTimeout, dropped, err)
	}
	return fmt.Errorf("build index %s of table %s (%s): %w", b.index, b.table, dropped, err)
}

// interrupted logs and returns the error of the build of b that a cancelled start-up stopped:
// PostgreSQL stopped it (SQLSTATE 57014, the answer to the cancel request that CancelInServer
// makes the driver send), or did not answer in time, and then the error wraps ErrLeftRunning.
// Either way the index is left INVALID, and the next start-up drops it and builds it again.
func (s *Store) interrupted(ctx context.Context, b indexBuild, err error, took time.Duration) error {
	log := slog.With("partition", s.Partition, "table", b.table, "index", b.index, "took", took.Round(time.Millisecond))
	code := ""
	if d := backend.LinkedPostgres(); d != nil {
		code = d.Classify(err).Code
	}
	if code != "57014" {
		log.Error("migration: interrupted; PostgreSQL did not confirm that it stopped the index build, which may still run there", "error", err.Error())
		return fmt.Errorf("building index %s of table %s was interrupted (%w): %w; %w", b.index, b.table, context.Cause(ctx), ErrLeftRunning, err)
	}
	log.Warn("migration: interrupted; PostgreSQL stopped the index build; the next start-up drops the INVALID index it left and builds it again")
	return fmt.Errorf("building index %s of table %s was interrupted, and PostgreSQL stopped it: %w", b.index, b.table, context.Cause(ctx))
}
