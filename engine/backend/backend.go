// Package backend holds what the engine needs from its database drivers and from the
// validator of descriptors' validate tags, as small interfaces that credo/engine/postgres,
// credo/engine/sqlite and credo/engine/validator fill in when a program imports them: those
// libraries import net/url, which the engine itself does not (internal/layers).
package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// Rows is what a read iterates: *sql.Rows, or a PostgreSQL pool's rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Page is a page's statement and its count's, sent to PostgreSQL together (Pool.SendPage).
type Page interface {
	// Total reads the count and ends the batch.
	Total() (int64, error)
	// End reads what is left of the batch and releases its connection and deadline.
	End() error
}

// Pool is a PostgreSQL connection pool: the request pool, or the probe that answers Ping.
// Each statement runs within the pool's timeout (see Postgres.Open).
type Pool interface {
	// Query runs a read; done ends the statement's deadline when the rows are closed (or at
	// once when Query fails, which the caller does).
	Query(ctx context.Context, done context.CancelFunc, sql string, args []any) (Rows, error)
	// Count runs a statement that answers one integer, into n.
	Count(ctx context.Context, sql string, args []any, n *int64) error
	// Exec runs a statement and returns how many rows it affected.
	Exec(ctx context.Context, sql string, args []any) (int64, error)
	// SendPage sends a page's statement and its count's in one batch on one connection and
	// returns the page's rows; done ends the batch's deadline when the batch ends.
	SendPage(ctx context.Context, done context.CancelFunc, pageSQL string, pageArgs []any, countSQL string, countArgs []any) (Page, Rows, error)
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Refusal returns the pool's last refused connection attempt when it is recent and no
	// attempt succeeded since (see Refused); nil otherwise.
	Refusal() error
	// SQL returns database/sql over the pool (GORM's statements share its connections).
	SQL() *sql.DB
	Stats() Stats
	Close()
}

// Stats is a snapshot of a Pool.
type Stats struct {
	Max, InUse, Idle int
	// Acquires counts every acquisition since the pool opened, Waits those that found no
	// idle connection; WaitTime is the time those waited.
	Acquires, Waits int64
	WaitTime        time.Duration
}

// CopySource is the rows of a COPY.
type CopySource interface {
	Next() bool
	Values() ([]any, error)
	Err() error
}

// Error is what the engine reads of an error of the PostgreSQL driver.
type Error struct {
	// Code, Constraint and Message are those of PostgreSQL's error in the chain; Code is ""
	// when there is none.
	Code, Constraint, Message string
	// ConnectFailed: a connection attempt failed. Closed: the pool or the connection was
	// closed before the statement.
	ConnectFailed, Closed bool
}

// Postgres is the PostgreSQL driver.
type Postgres interface {
	// Open opens the request pool of url, at most maxConns connections, each connection
	// attempt, wait for a connection and statement (its own and GORM's) bounded by timeout,
	// every connection refused unless the database's encoding is UTF8; and the probe, one
	// connection of its own, kept open. It connects neither.
	Open(url string, maxConns int, timeout time.Duration) (requests, probe Pool, err error)
	// Dialector returns GORM's PostgreSQL dialector over conn.
	Dialector(conn gorm.ConnPool) gorm.Dialector
	// CopyFrom copies the rows of src into schema.table with COPY, on conn, the driver
	// connection of a *sql.Conn of a Pool's SQL (sql.Conn.Raw).
	CopyFrom(ctx context.Context, conn any, schema, table string, cols []string, src CopySource) (int64, error)
	// Classify reads err.
	Classify(err error) Error
}

// SQLite is the SQLite driver.
type SQLite interface {
	// Driver is its database/sql driver name.
	Driver() string
	// RegisterContains gives every connection the driver opens afterwards the function name(h,
	// n): 1 when contains(h, n), 0 when not, NULL when h or n is NULL. Called once per name.
	RegisterContains(name string, contains func(h, n string) bool)
	// Code returns the primary result code of the driver's error in err's chain (SQLITE_ERROR
	// 1, SQLITE_BUSY 5, SQLITE_LOCKED 6, …), 0 when there is none.
	Code(err error) int
}

// SQLite's primary result codes that the engine reads (https://sqlite.org/rescode.html).
const (
	SQLiteError  = 1 // SQLITE_ERROR: a generic error, among them an unknown table or column
	SQLiteBusy   = 5 // SQLITE_BUSY: another connection holds the file's lock past busy_timeout
	SQLiteLocked = 6 // SQLITE_LOCKED: a conflict within the same connection or shared cache
	// The file cannot be written for a reason of its environment:
	SQLitePerm     = 3  // SQLITE_PERM: access permission denied
	SQLiteReadOnly = 8  // SQLITE_READONLY: the file or its folder became read-only
	SQLiteIOErr    = 10 // SQLITE_IOERR: the operating system reported an I/O error
	SQLiteFull     = 13 // SQLITE_FULL: the file system is full
	SQLiteCantOpen = 14 // SQLITE_CANTOPEN: the file (or its journal) cannot be opened
)

// Validator checks a value against a descriptor's validate tag: go-playground/validator's
// Var. A tag it cannot read panics.
type Validator interface {
	Var(field any, tag string) error
}

var linked struct {
	postgres  Postgres
	sqlite    SQLite
	validator Validator
}

func register[T comparable](slot *T, v T, what string) {
	var zero T
	if v == zero {
		panic(fmt.Sprintf("backend: %s is nil", what))
	}
	if *slot != zero {
		panic(fmt.Sprintf("backend: %s registered twice", what))
	}
	*slot = v
}

// RegisterPostgres links the PostgreSQL driver; the init of credo/engine/postgres calls it.
// Each Register function panics when called twice.
func RegisterPostgres(p Postgres) { register(&linked.postgres, p, "the PostgreSQL driver") }

// RegisterSQLite links the SQLite driver; the init of credo/engine/sqlite calls it.
func RegisterSQLite(s SQLite) { register(&linked.sqlite, s, "the SQLite driver") }

// RegisterValidator links the validator; the init of credo/engine/validator calls it.
func RegisterValidator(v Validator) { register(&linked.validator, v, "the validator") }

// LinkedPostgres returns the linked PostgreSQL driver, nil when the program has none.
func LinkedPostgres() Postgres { return linked.postgres }

// LinkedSQLite returns the linked SQLite driver, nil when the program has none.
func LinkedSQLite() SQLite { return linked.sqlite }

// LinkedValidator returns the linked validator, nil when the program has none.
func LinkedValidator() Validator { return linked.validator }

// Refused reports whether a SQLSTATE is PostgreSQL refusing a connection or a statement for
// lack of resources (class 53: too many clients, out of memory, disk full, configuration
// limits) or because it is stopping or starting (57P01 admin shutdown, 57P02 crash
// shutdown, 57P03 cannot connect now, 57P04 database dropped, 57P05 idle session timeout).
func Refused(code string) bool {
	return len(code) == 5 && (code[:2] == "53" || code[:4] == "57P0")
}

// LockTimeout is the lock_timeout of the request pool's PostgreSQL sessions for a store's
// timeout: a little less than the timeout, so that a statement that waits for a lock another
// transaction holds (a record it writes, its table) is ended by PostgreSQL (SQLSTATE 55P03)
// before the statement's own deadline ends it as a database that does not answer, and the
// request can say which it was. The connection stays usable (a deadline closes it). The margin,
// a tenth of the timeout and at most 200 ms, covers the wait for a pooled connection and the
// statement's way to the server, which the deadline includes.
func LockTimeout(timeout time.Duration) time.Duration {
	return timeout - min(timeout/10, 200*time.Millisecond)
}

// Disconnected reports whether err is a connection the database closed or lost
// mid-conversation (a server stopped, a network cut): the socket's error (not a timeout), or
// io.ErrUnexpectedEOF for a stream that ended. (A driver's own error for a connection closed
// afterwards is its Error.Closed.)
func Disconnected(err error) bool {
	var netErr *net.OpError
	return errors.As(err, &netErr) && !netErr.Timeout() || errors.Is(err, io.ErrUnexpectedEOF)
}

// streamKey marks the context of a stream's statement, which has a progress deadline of the
// engine's instead of a statement deadline.
type streamKey struct{}

// Stream marks ctx as a stream's.
func Stream(ctx context.Context) context.Context { return context.WithValue(ctx, streamKey{}, true) }

// IsStream reports whether ctx is a stream's.
func IsStream(ctx context.Context) bool { return ctx.Value(streamKey{}) != nil }

// ServerCancelGrace is how long a statement of a context marked CancelInServer waits, once the
// context is cancelled, for PostgreSQL to answer its cancel request before the connection is
// cut (and the statement perhaps left running in the server). A cancel request is one
// connection to the server, and a backend answers it at its next check for interrupts, which
// an index build's waits and scans reach within milliseconds; 3 s covers a slow network and
// keeps an interrupted start-up's exit well inside an orchestrator's grace (Kubernetes gives
// 30 s by default, systemd 90 s).
const ServerCancelGrace = 3 * time.Second

// cancelKey marks a context whose statements PostgreSQL must stop when it is cancelled; its
// value is the *cancelState that the contexts derived from it share.
type cancelKey struct{}

// cancelState is what the driver reports of the cancels of a CancelInServer context.
type cancelState struct{ unconfirmed atomic.Bool }

// CancelInServer marks ctx so that, when it is cancelled, the driver asks PostgreSQL to cancel
// the statement running on it (a cancel request) and waits up to ServerCancelGrace for the
// statement to end, instead of only cutting its connection, which leaves the statement running
// in the server until it next writes to the client. A migration's statements use it: an index
// build may run for an hour. Whether PostgreSQL confirmed every such stop is then
// CancelUnconfirmed's to say.
func CancelInServer(ctx context.Context) context.Context {
	return context.WithValue(ctx, cancelKey{}, new(cancelState))
}

// CancelsInServer reports whether ctx is marked CancelInServer.
func CancelsInServer(ctx context.Context) bool { return ctx.Value(cancelKey{}) != nil }

// CancelNotConfirmed is what the driver calls when a statement of ctx, a CancelInServer
// context, was still running ServerCancelGrace after its cancel request, and was ended by
// cutting its connection: PostgreSQL may still run it. A context not so marked is ignored.
func CancelNotConfirmed(ctx context.Context) {
	if st, ok := ctx.Value(cancelKey{}).(*cancelState); ok {
		st.unconfirmed.Store(true)
	}
}

// CancelUnconfirmed reports whether a statement of ctx (a CancelInServer context, or one
// derived from it) was cancelled without PostgreSQL confirming within ServerCancelGrace that it
// stopped it (see CancelNotConfirmed): whatever the step that ran it, the statement may still
// run in the server, holding its locks and snapshot.
func CancelUnconfirmed(ctx context.Context) bool {
	st, ok := ctx.Value(cancelKey{}).(*cancelState)
	return ok && st.unconfirmed.Load()
}
