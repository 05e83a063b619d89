package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"credo/engine/backend"
)

// tracer is the pgx tracer of the request pool: it bounds statements and connection waits
// (see Deadlines in credo/engine), records refused connection attempts for Ping, and empties
// the pool of its idle connections when a statement finds its connection lost (see
// TraceQueryEnd), and clears a connection's socket deadline as it goes back to the pool (see
// TraceRelease). It sets the deadline inside pgx, where every statement passes — the
// planned ones, GORM's through database/sql, BEGIN and COMMIT — and pgx watches it with
// context.AfterFunc, without a goroutine per statement.
type tracer struct {
	timeout  time.Duration
	refusals *refusals
	pool     atomic.Pointer[pgxpool.Pool]
}

var (
	_ pgx.QueryTracer       = (*tracer)(nil)
	_ pgx.BatchTracer       = (*tracer)(nil)
	_ pgx.ConnectTracer     = (*tracer)(nil)
	_ pgxpool.AcquireTracer = (*tracer)(nil)
	_ pgxpool.ReleaseTracer = (*tracer)(nil)
)

// bounded is a context whose deadline the tracer set, with the function that releases it.
type bounded struct {
	context.Context
	cancel context.CancelFunc
}

// bound gives ctx the tracer's deadline, unless it is a stream's or already ends as soon.
func (t *tracer) bound(ctx context.Context) context.Context {
	if backend.IsStream(ctx) {
		return ctx
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= t.timeout {
		return ctx
	}
	c, cancel := context.WithTimeout(ctx, t.timeout)
	return &bounded{Context: c, cancel: cancel}
}

// release ends the bound that TraceAcquireStart or TraceQueryStart put on ctx, if any.
func release(ctx context.Context) {
	switch b := ctx.(type) {
	case *bounded:
		b.cancel()
	case *waitCtx:
		b.release()
	}
}

// socketDeadline reports the deadline of a context that has one but no Done channel: the
// engine's statement context (see Store.statement in credo/engine). pgx watches no such context;
// the tracer bounds its wait for a connection with a waitCtx and its statement with the
// deadline set on the connection's socket, which is how pgx itself interrupts a statement whose
// context expires (pgconn.DeadlineContextWatcherHandler): the statement fails with a timeout
// and pgx closes the connection.
func socketDeadline(ctx context.Context) (time.Time, bool) {
	if ctx.Done() != nil {
		return time.Time{}, false
	}
	return ctx.Deadline()
}

func (t *tracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if dl, ok := socketDeadline(ctx); ok {
		_ = c.PgConn().Conn().SetDeadline(dl)
		return ctx
	}
	return t.bound(ctx)
}

// clearSocketDeadline removes the deadline TraceQueryStart set on c's socket for ctx's
// statement, so that the connection's next statement runs without it.
func clearSocketDeadline(ctx context.Context, c *pgx.Conn) {
	if _, ok := socketDeadline(ctx); ok {
		clearDeadline(c)
	}
}

// clearDeadline removes any deadline from c's socket. A closed connection keeps it: pgx's own
// close sets a deadline of its own.
func clearDeadline(c *pgx.Conn) {
	if c != nil && !c.IsClosed() {
		_ = c.PgConn().Conn().SetDeadline(time.Time{})
	}
}

// TraceQueryEnd releases the statement's deadline. A statement whose connection was lost (the
// database stopped, the network was cut) means the pool's idle connections to that server are
// most likely lost too: they are closed, so that the requests after the database comes back
// connect afresh rather than each failing on a dead connection (pgx pings only connections
// idle for more than a second). Connections in use close when released.
func (t *tracer) TraceQueryEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceQueryEndData) {
	release(ctx)
	clearSocketDeadline(ctx, c)
	if data.Err != nil && (backend.Disconnected(data.Err) || errors.Is(data.Err, pgconn.ErrConnClosed)) {
		if p := t.pool.Load(); p != nil {
			p.Reset()
		}
	}
}

// A batch (a page and its count, see pool.SendPage) is bounded and ends like one statement.
func (t *tracer) TraceBatchStart(ctx context.Context, c *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return t.TraceQueryStart(ctx, c, pgx.TraceQueryStartData{})
}

func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t *tracer) TraceBatchEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceBatchEndData) {
	t.TraceQueryEnd(ctx, c, pgx.TraceQueryEndData{Err: data.Err})
}

func (t *tracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	if dl, ok := socketDeadline(ctx); ok {
		return waitUntil(ctx, dl)
	}
	return t.bound(ctx)
}

func (t *tracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	release(ctx)
}

// TraceRelease clears the socket deadline of every connection going back to the pool, so that
// no connection taken from it has one. The statement that set the deadline clears it when it
// ends (TraceQueryEnd), but only if pgx reports the end: v5.10's Exec returns without calling
// TraceQueryEnd when it fails to deallocate the cached statements a schema change invalidated.
// A deadline left on an idle connection would fail its next request with a timeout at a moment
// unrelated to that request, or fail the ping pgx sends before reusing a connection idle for a
// second. Clearing it here, rather than when the connection is acquired, runs before that
// ping; it is a call into the runtime's poller, without an allocation.
func (t *tracer) TraceRelease(_ *pgxpool.Pool, data pgxpool.TraceReleaseData) {
	clearDeadline(data.Conn)
}

func (t *tracer) TraceConnectStart(ctx context.Context, _ pgx.TraceConnectStartData) context.Context {
	return ctx
}

func (t *tracer) TraceConnectEnd(_ context.Context, data pgx.TraceConnectEndData) {
	t.refusals.note(data.Err)
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

// refused reports whether err is PostgreSQL refusing a connection (backend.Refused).
func refused(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && backend.Refused(pgErr.Code)
}
