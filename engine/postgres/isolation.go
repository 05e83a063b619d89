package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

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
	if _, err := c.Exec(ctx, "SET default_transaction_isolation = 'read committed'"); err != nil {
		return fmt.Errorf("postgres: set the session's isolation to read committed: %w", err)
	}
	return nil
}
