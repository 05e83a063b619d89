package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Deadlines. Every PostgreSQL statement, and every wait for one of the pool's connections, ends
// within the store's timeout (Limits.Timeout), so that a database that stops answering fails
// requests with 503 instead of holding them, their goroutines and their connections for ever,
// and so that a shutdown can drain. The tracer below sets the deadline inside pgx, where every
// statement passes — the planned ones, GORM's through database/sql, BEGIN and COMMIT — and
// pgx watches it with context.AfterFunc, without a goroutine per statement. A context.
// WithTimeout and its AfterFunc cost about 0.7 µs per statement (1.3 µs on the loaded
// benchmark machine), about 1% of a get's CPU.
//
// SQLite runs in the process on a local file: a statement can only wait for another
// connection's lock, and busy_timeout bounds that wait by the same timeout.

// detach returns the context that statements run on for a caller's ctx. On PostgreSQL it keeps
// ctx's values but not its cancellation or deadline; the tracer gives each statement the
// store's timeout instead. pgx answers a cancelled context by cutting the connection off
// mid-protocol, and some connections came back from that unusable: with half of 64 clients
// abandoning their requests, 3 to 4 of 25,000 requests that nobody cancelled failed with
// "failed to deallocate cached statement(s): … i/o timeout" or "driver: bad connection"
// (TestCancelledClientsDoNotFailOthers). A request's statements now complete, or fail at their
// deadline, whoever leaves. On SQLite ctx is returned as it is: its driver interrupts a
// statement cleanly, and a client that leaves still stops a long list.
// A stream's context (see progress) is kept as it is.
func (s *Store) detach(ctx context.Context) context.Context {
	if s.dialect != Postgres || ctx.Done() == nil || ctx.Value(streamKey{}) != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// statement returns the context of one PostgreSQL statement that the engine runs on the pool
// directly: detached, with the store's timeout covering both the wait for a connection and
// the statement (one timer where the tracer would set two). The caller calls cancel when the
// statement, rows included, is done. A stream's context is kept as it is.
func (s *Store) statement(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(streamKey{}) != nil {
		return ctx, func() {}
	}
	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	return context.WithTimeout(ctx, s.timeout)
}

// tracer is the pgx tracer of the request pool: it bounds statements and connection waits
// (see Deadlines), records refused connection attempts for Ping, and empties the pool of its
// idle connections when a statement finds its connection lost (see TraceQueryEnd).
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
)

// bounded is a context whose deadline the tracer set, with the function that releases it.
type bounded struct {
	context.Context
	cancel context.CancelFunc
}

// streamKey marks the context of a stream's statement, which has a progress deadline instead
// (see progress).
type streamKey struct{}

// bound gives ctx the tracer's deadline, unless it is a stream's or already ends as soon.
func (t *tracer) bound(ctx context.Context) context.Context {
	if ctx.Value(streamKey{}) != nil {
		return ctx
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= t.timeout {
		return ctx
	}
	c, cancel := context.WithTimeout(ctx, t.timeout)
	return &bounded{Context: c, cancel: cancel}
}

func release(ctx context.Context) {
	if b, ok := ctx.(*bounded); ok {
		b.cancel()
	}
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return t.bound(ctx)
}

// TraceQueryEnd releases the statement's deadline. A statement whose connection was lost (the
// database stopped, the network was cut) means the pool's idle connections to that server are
// most likely lost too: they are closed, so that the requests after the database comes back
// connect afresh rather than each failing on a dead connection (pgx pings only connections
// idle for more than a second). Connections in use close when released.
func (t *tracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	release(ctx)
	if data.Err != nil && lostConnection(data.Err) {
		if p := t.pool.Load(); p != nil {
			p.Reset()
		}
	}
}

// A batch (a page and its count, see sendPage) is bounded and ends like one statement.
func (t *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return t.bound(ctx)
}

func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t *tracer) TraceBatchEnd(ctx context.Context, c *pgx.Conn, data pgx.TraceBatchEndData) {
	t.TraceQueryEnd(ctx, c, pgx.TraceQueryEndData{Err: data.Err})
}

func (t *tracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return t.bound(ctx)
}

func (t *tracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	release(ctx)
}

func (t *tracer) TraceConnectStart(ctx context.Context, _ pgx.TraceConnectStartData) context.Context {
	return ctx
}

func (t *tracer) TraceConnectEnd(_ context.Context, data pgx.TraceConnectEndData) {
	t.refusals.note(data.Err)
}

// progress bounds a stream of every match (an export, Take 0) by the time the database takes
// to deliver each row rather than by the time of the whole statement, which grows with the
// table: the stream's context is cancelled when no row arrives within the timeout. Time spent
// by the consumer between rows does not count. A nil *progress (SQLite) does nothing.
type progress struct {
	timer   *time.Timer
	timeout time.Duration
	expired atomic.Bool
}

// streamProgress returns the context of a stream's statement and its progress deadline, armed; stop
// releases both.
func (s *Store) streamProgress(ctx context.Context) (_ context.Context, _ *progress, stop func()) {
	if s.dialect != Postgres {
		return ctx, nil, func() {}
	}
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), streamKey{}, true))
	p := &progress{timeout: s.timeout}
	p.timer = time.AfterFunc(s.timeout, func() { p.expired.Store(true); cancel() })
	return ctx, p, func() { p.timer.Stop(); cancel() }
}

// check turns the error of a stream whose deadline passed into ErrUnavailable.
func (p *progress) check(err error) error {
	if p != nil && p.expired.Load() {
		return fmt.Errorf("%w: the database sent no row within %v: %v", ErrUnavailable, p.timeout, err)
	}
	return err
}

// wait arms the deadline before the stream waits for the database.
func (p *progress) wait() {
	if p != nil {
		p.timer.Reset(p.timeout)
	}
}

// got disarms it when a row has arrived.
func (p *progress) got() {
	if p != nil {
		p.timer.Stop()
	}
}
