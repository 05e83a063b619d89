package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// readCommittedSQL is the statement of readCommitted.
const readCommittedSQL = "SET default_transaction_isolation = 'read committed'"

// readCommitted makes READ COMMITTED the isolation level of every transaction of the session c
// (its statements' implicit ones included), whatever default_transaction_isolation a DBA set on
// the database, the role or the server. credo's read-merge-writes (a row read FOR UPDATE, then
// written) and its other multi-statement transactions are designed and tested at READ
// COMMITTED: under REPEATABLE READ a patch that waited for another's row lock failed with a
// serialization failure (SQLSTATE 40001, a 503; 54 of 80 concurrent patches of one record),
// and a migration read the catalog as it was before the wait for its lock.
//
// It is a SET when the connection opens, one round trip per connection, not per transaction.
// A startup parameter (pgx's RuntimeParams) would cost none, but PgBouncer, which may stand in
// front in session mode (docs/deploy.md), refuses a connection that sends one it does not
// track (FATAL: unsupported startup parameter, SQLSTATE 08P01), or drops it when told to
// ignore it.
func readCommitted(ctx context.Context, c *pgx.Conn) error {
	if _, err := c.Exec(ctx, readCommittedSQL); err != nil {
		return fmt.Errorf("postgres: set the session's isolation to read committed: %w", err)
	}
	return nil
}

// requestSession returns what sets up a connection of the request pool: READ COMMITTED
// (readCommitted) and the lock_timeout of backend.LockTimeout, so that a request that waits
// for a lock past it fails as such (SQLSTATE 55P03), a little before its statement's deadline
// would have failed it as a database that does not answer. Both in one round trip: a statement
// without arguments is sent in the simple protocol, which takes several.
//
// It overrides a lock_timeout that a DBA set on the database or the role. A migration's
// statements set their own (see migrateAttempt and onMigrationConn in credo/engine), and
// restore this one when the connection goes back to the pool.
func requestSession(lockTimeout time.Duration) func(context.Context, *pgx.Conn) error {
	set := fmt.Sprintf("%s; SET lock_timeout = %d", readCommittedSQL, lockTimeout.Milliseconds())
	return func(ctx context.Context, c *pgx.Conn) error {
		if _, err := c.Exec(ctx, set); err != nil {
			return fmt.Errorf("postgres: set the session's isolation to read committed and its lock_timeout: %w", err)
		}
		return nil
	}
}
