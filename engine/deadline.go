package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"credo/engine/backend"
	"credo/internal/reqctx"
)

// Deadlines. Every PostgreSQL statement, and every wait for one of the pool's connections, ends
// within the store's timeout (Limits.Timeout), so that a database that stops answering fails
// requests with 503 instead of holding them, their goroutines and their connections for ever,
// and so that a shutdown can drain. The tracer of credo/engine/postgres sets the deadline
// inside pgx, where every statement passes — the planned ones, GORM's through database/sql,
// BEGIN and COMMIT — and pgx watches it with context.AfterFunc, without a goroutine per
// statement. The statements the engine runs on the pool directly (the planned reads and
// writes, a page and its count) carry their deadline in a context without a Done channel
// instead (see statement), which the tracer enforces without a context.WithTimeout or pgx's
// watcher (13 fewer allocations per get).
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
	if s.dialect != Postgres || ctx.Done() == nil || backend.IsStream(ctx) {
		return ctx
	}
	return reqctx.WithoutCancel(ctx)
}

// statement returns the context of one PostgreSQL statement that the engine runs on the pool
// directly: ctx's values, no cancellation, and one deadline, the store's timeout from now,
// covering both the wait for a connection and the statement. The caller calls cancel when the
// statement, rows included, is done. A stream's context is kept as it is.
//
// The context has no Done channel (reqctx.WithoutCancelUntil); credo/engine/postgres's tracer
// enforces its deadline where pgx waits. The wait for a pooled connection gets a Done channel
// that closes at the deadline; the statement gets the deadline on its connection's socket
// (net.Conn.SetDeadline), which is what pgx's own context watcher does when a context expires,
// so that a statement that overruns fails the same way. With no Done channel, pgx watches
// nothing: a context.WithTimeout, its timer and channel, the context.AfterFunc pgx registered
// on it and pgx's watcher cost 13 allocations per statement. Its Err is always nil: nothing
// but the tracer reads its deadline. The first statement of a request (a get's only one) finds
// its context in the request's own (reqctx), with no allocation.
func (s *Store) statement(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Done() != nil && backend.IsStream(ctx) {
		return ctx, noCancel
	}
	return reqctx.WithoutCancelUntil(ctx, time.Now().Add(s.timeout)), noCancel
}

// noCancel is the cancel of a context that holds nothing to release.
func noCancel() {}

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
	ctx, cancel := context.WithCancel(backend.Stream(context.WithoutCancel(ctx)))
	p := &progress{timeout: s.timeout}
	p.timer = time.AfterFunc(s.timeout, func() { p.expired.Store(true); cancel() })
	return ctx, p, func() { p.timer.Stop(); cancel() }
}

// check turns the error of a stream whose deadline passed into ErrUnavailable.
func (p *progress) check(err error) error {
	if p != nil && p.expired.Load() {
		return &DatabaseError{Category: ErrUnavailable, Reason: fmt.Sprintf("the database sent no row within %v", p.timeout), Err: err}
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
