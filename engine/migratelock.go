package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"credo/engine/backend"
)

// migrationLockWait bounds each wait of a PostgreSQL migration for the locks of the tables it
// changes (lock_timeout). While a migration waits for ACCESS EXCLUSIVE behind a transaction
// using the table, every later request for the table queues behind the migration, reads
// included: a long read (an export, a credo load) beside a release's first start-up stopped
// the table for every replica. Past this wait the migration rolls back, which lets the queue
// through, and tries again (see migrateLocked). It is below PostgreSQL's default
// deadlock_timeout (1 s), so that when a serving transaction and the migration wait for each
// other, the migration gives way before PostgreSQL picks a victim, which could be the request.
const migrationLockWait = 500 * time.Millisecond

// migrateLocked migrates a PostgreSQL partition, in attempts (see migrateAttempt). An attempt
// that waits for a table lock longer than its wait (migrationLockWait, or half the timeout if
// shorter), or that PostgreSQL aborts in a deadlock, is rolled back; the migration waits as
// long again, with nothing locked, and tries again, for as long as the store's timeout allows
// and at least twice. Each retry is logged; the last failure is a *lockWaitError naming the
// table, the lock and the processes that held it.
func (s *Store) migrateLocked(ctx context.Context) error {
	wait := min(migrationLockWait, s.timeout/2)
	start := time.Now()
	for attempt := 1; ; attempt++ {
		err := s.transaction(ctx, func(tx *Store) error { return tx.migrateAttempt(ctx, wait) })
		var busy *lockWaitError
		if !errors.As(err, &busy) || ctx.Err() != nil {
			return err
		}
		busy.attempts, busy.wait, busy.waited = attempt, wait, time.Since(start).Round(time.Millisecond)
		busy.holders = s.lockHolders(ctx, busy.table)
		if attempt >= 2 && time.Since(start)+2*wait > s.timeout {
			return busy
		}
		slog.Warn("migration: a table it changes is in use by other processes' transactions; rolled back to let them through, trying again",
			"partition", s.Partition, "table", busy.table, "lock", busy.mode, "held_by", strings.Join(busy.holders, "; "),
			"attempt", attempt, "cause", busy.cause.Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return busy
		case <-t.C:
		}
	}
}

// migrateAttempt is one attempt of a PostgreSQL migration, in its transaction, on the
// migration's connection, which holds the partition's advisory lock (see onMigrationConn): it
// reads the schema, takes every table lock the plan needs, each waiting at most wait, and only
// then changes anything (see lockTables).
func (s *Store) migrateAttempt(ctx context.Context, wait time.Duration) error {
	// The plan reads the catalog as the migration that held the advisory lock left it: the
	// lock is taken before the transaction begins, and every connection runs READ COMMITTED
	// (see readCommitted in credo/engine/postgres). Under a REPEATABLE READ default, with the
	// lock taken in the transaction, the transaction's one snapshot predated the other
	// process's migration: the plan added a column again, and start-up failed (SQLSTATE 42701).
	db := s.db.WithContext(ctx)
	if err := db.Exec("CREATE SCHEMA IF NOT EXISTS " + quote(s.schema)).Error; err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	plan, err := s.plan(ctx)
	if err != nil || len(plan.steps) == 0 {
		return err
	}
	if err := db.Exec(fmt.Sprintf("SET LOCAL lock_timeout = %d", wait.Milliseconds())).Error; err != nil {
		return fmt.Errorf("lock_timeout: %w", err)
	}
	if err := s.lockTables(ctx, plan); err != nil {
		return err
	}
	if err := s.run(ctx, plan); err != nil {
		if lockWait(err) {
			return &lockWaitError{cause: err}
		}
		return err
	}
	return nil
}

// lockTables takes, on PostgreSQL, the lock that each existing table of the plan needs, in the
// order of their names, before the migration changes anything. No statement of the migration
// then waits for a table lock, nor asks for a stronger lock on a table it has locked: a
// migration that took SHARE by CREATE INDEX and then asked for ACCESS EXCLUSIVE by DROP INDEX
// deadlocked with a serving process that had read the table in a transaction and then wrote
// it (a people import beside the first start-up of a release: SQLSTATE 40P01, the start-up or
// the request failed). No order stops a serving transaction that uses two of the tables in
// the other order from holding one the migration waits for while it waits for one the
// migration has locked (that deadlock failed start-up with 40P01 too): the migration's wait
// ends first (migrationLockWait), it rolls back, which lets the transaction through, and tries
// again. The indexes of existing tables need no lock here: they are built after the
// transaction, concurrently (see buildIndexes). SQLite's migration holds the whole file from
// BEGIN IMMEDIATE.
func (s *Store) lockTables(ctx context.Context, p *migrationPlan) error {
	db := s.db.WithContext(ctx)
	for _, table := range p.lockOrder() {
		mode := p.locks[table]
		if err := db.Exec("LOCK TABLE " + s.qualify(table) + " IN " + string(mode) + " MODE").Error; err != nil {
			if lockWait(err) || timedOut(err) {
				return &lockWaitError{table: table, mode: mode, cause: err}
			}
			return fmt.Errorf("lock %s: %w", table, err)
		}
	}
	return nil
}

// lockWait reports whether err is a migration's wait for a lock that PostgreSQL ended: its
// lock_timeout (SQLSTATE 55P03), or a deadlock broken by aborting the migration (40P01).
func lockWait(err error) bool {
	d := backend.LinkedPostgres()
	if d == nil {
		return false
	}
	code := d.Classify(err).Code
	return code == "55P03" || code == "40P01"
}

// lockWaitError is a PostgreSQL migration that did not get the locks of the tables it changes:
// transactions of other processes held them through every attempt. Its message says so, with
// %v for the cause, so that start-up does not report it as the database not answering.
type lockWaitError struct {
	// table is the table whose lock the last attempt waited for, in mode; empty when it was a
	// statement of the migration rather than its locking that waited (a deadlock).
	table    string
	mode     lockMode
	cause    error
	attempts int
	// wait is each attempt's wait; waited the time from the first attempt to the last's end.
	wait, waited time.Duration
	// holders are the processes that held the table when the last attempt gave up.
	holders []string
}

func (e *lockWaitError) Error() string {
	what, lock := "a table", "its locks"
	if e.table != "" {
		what, lock = "table "+e.table, "its "+string(e.mode)+" lock"
	}
	held := ""
	if len(e.holders) > 0 {
		held = "; held by " + strings.Join(e.holders, ", ")
	}
	return fmt.Sprintf("the migration changes %s, and transactions of other processes (a replica's requests, a credo load) used it through %d attempts over %v, each waiting %v for %s before letting the requests queued behind it through%s; start again once they are done, or raise --database-timeout: %v",
		what, e.attempts, e.waited, e.wait, lock, held, e.cause)
}

// maxHoldersShown bounds the processes a lockWaitError names.
const maxHoldersShown = 5

// lockHolders describes the other sessions that hold a lock on table (at most
// maxHoldersShown): process id, application, state, how long their transaction has been
// open, and the lock, as pg_stat_activity shows them to credo's role. Best effort: nil when
// table is empty or the catalog cannot be read.
func (s *Store) lockHolders(ctx context.Context, table string) []string {
	if table == "" {
		return nil
	}
	var rows []struct {
		Pid         int
		Mode        string
		Application string
		State       string
		Open        float64
	}
	err := s.db.WithContext(ctx).Raw(`SELECT l.pid, l.mode, coalesce(a.application_name, '') AS application,
		coalesce(a.state, '') AS state, coalesce(extract(epoch FROM now() - a.xact_start), 0)::float8 AS open
		FROM pg_locks AS l LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
		WHERE l.locktype = 'relation' AND l.relation = to_regclass(?) AND l.granted AND l.pid <> pg_backend_pid()
		ORDER BY a.xact_start NULLS LAST, l.pid LIMIT ?`, s.qualify(table), maxHoldersShown).Scan(&rows).Error
	if err != nil {
		return nil
	}
	holders := make([]string, len(rows))
	for i, r := range rows {
		var parts []string
		if r.Application != "" {
			parts = append(parts, "application "+r.Application)
		}
		if r.State != "" {
			parts = append(parts, r.State)
		}
		if r.Open > 0 {
			parts = append(parts, "transaction open "+time.Duration(r.Open*float64(time.Second)).Round(time.Second).String())
		}
		parts = append(parts, r.Mode)
		holders[i] = fmt.Sprintf("pid %d (%s)", r.Pid, strings.Join(parts, ", "))
	}
	return holders
}
