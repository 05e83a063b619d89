package observe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"credo/engine"
)

// Bounds of the failure log. When a partition's database fails, every request to it fails;
// logging each would bury the log (a 10-second outage under load wrote 55,000 lines), so an
// outage is logged as its state changes, and other failures at a bounded rate.
const (
	// OutageReportEvery is how often a continuing outage is reported, with the count of requests
	// it failed since the last report.
	OutageReportEvery = 10 * time.Second
	// OutageQuiet is how long a partition must go without an unavailable answer before a
	// success ends its outage, so that answers that never reach the database (a 2xx from
	// platform/version) do not make the outage flap.
	OutageQuiet = 2 * time.Second
	// ErrorLinesPerSecond bounds the other failure lines (500s, panics); the count of those left
	// out is logged with the next line that is written.
	ErrorLinesPerSecond = 5
	// RefusalLinesPerSecond bounds the lines of refusals a client can provoke at will
	// (authentication failures, see Refused), apart from the failure lines, so that a client
	// spraying bad credentials neither buries the log nor crowds out a 500's line.
	RefusalLinesPerSecond = 5
)

// failureLog is the state behind the bounds.
type failureLog struct {
	down    atomic.Int32 // open outages; 0 keeps the success path to one atomic load
	mu      sync.Mutex
	outages map[string]*outage
	// errors budgets the failure lines, refusals the refusal lines.
	errors, refusals lineBudget
}

// lineBudget counts the lines of one kind written in the current second, and those left out.
type lineBudget struct {
	second            int64 // the Unix second whose lines counts
	lines, suppressed int
}

// take spends a line of the second now if perSecond allows it, returning how many lines were
// left out before it (to be reported with it); ok is false when the line must be left out.
func (b *lineBudget) take(now int64, perSecond int) (left int, ok bool) {
	if now != b.second {
		b.second, b.lines = now, 0
	}
	if b.lines >= perSecond {
		b.suppressed++
		return 0, false
	}
	b.lines++
	left, b.suppressed = b.suppressed, 0
	return left, true
}

// outage is a partition that stopped serving: its database stopped answering, or its schema
// lost what the descriptors need.
type outage struct {
	kind                  *outageKind // the kind it began as: its lines' messages
	since, reported, last time.Time
	failed, total         int // requests failed since the last report, and since the start
}

// outageKind gives the messages of an outage's lines: when it begins, while it lasts, when it
// ends.
type outageKind struct{ began, still, ended string }

var (
	// databaseDown: the partition's database does not answer.
	databaseDown = &outageKind{"database unavailable", "database still unavailable", "database available again"}
	// notMigrated: the partition's tables lack a table or column the descriptors need (a
	// readiness probe's finding, or a request's).
	notMigrated = &outageKind{"partition not migrated", "partition still not migrated", "partition ready again"}
)

// Fail logs the cause of a request that failed with a 5xx status, once per request. An
// unavailable database (engine.ErrUnavailable) is logged as an outage of the request's
// partition, and so is a partition whose tables lack what its descriptors need
// (engine.ErrNotMigrated), as the kind of outage a readiness probe finds; anything else is an
// error line with the request id, at most ErrorLinesPerSecond a second: among them a request
// that waited past its timeout for a lock that another transaction held (engine.Locked), since
// the database answers. Outside the observer's middleware it logs plainly.
func Fail(r *http.Request, status int, err error) {
	e := From(r.Context())
	if e == nil {
		slog.ErrorContext(r.Context(), "request failed", "method", engine.ShownName(r.Method), "path", engine.ShownPath(r.URL.EscapedPath()), "status", status, "err", err)
		return
	}
	if e.logged {
		return
	}
	e.logged = true
	switch {
	case e.Partition == "":
	case errors.Is(err, engine.ErrNotMigrated):
		e.obs.failures.unavailable(e.obs, r.Context(), e.Partition, e.ID, err, notMigrated)
		return
	case errors.Is(err, engine.ErrUnavailable) && !engine.Locked(err):
		e.obs.failures.unavailable(e.obs, r.Context(), e.Partition, e.ID, err, databaseDown)
		return
	}
	e.obs.failures.error(e.obs, r.Context(), "request failed", slog.String("request_id", e.ID),
		slog.String("method", engine.ShownName(r.Method)), slog.String("route", e.Route()), slog.String("partition", e.Partition),
		slog.Int("status", status), slog.Any("err", err))
}

// Refused logs a refusal that a client can provoke at will (an authentication failure) as a
// warning, at most RefusalLinesPerSecond a second: the count of those left out is logged with
// the next one written, and every refusal is still counted in the metrics. Outside the
// observer's middleware it logs plainly.
func Refused(r *http.Request, msg string, attrs ...slog.Attr) {
	e := From(r.Context())
	if e == nil {
		slog.LogAttrs(r.Context(), slog.LevelWarn, msg, attrs...)
		return
	}
	e.obs.failures.log(e.obs, r.Context(), &e.obs.failures.refusals, RefusalLinesPerSecond, slog.LevelWarn, msg, attrs...)
}

// Unavailable records that a partition's database did not answer a request (a health check or
// readiness probe), as part of the partition's outage.
func Unavailable(r *http.Request, partition string, err error) {
	outageOf(r, partition, err, databaseDown)
}

// NotMigrated records that a readiness probe found the partition's tables lacking what the
// descriptors need, as part of the partition's outage, whose lines then say so ("partition not
// migrated") rather than that the database did not answer.
func NotMigrated(r *http.Request, partition string, err error) {
	outageOf(r, partition, err, notMigrated)
}

func outageOf(r *http.Request, partition string, err error, kind *outageKind) {
	e := From(r.Context())
	if e == nil {
		slog.WarnContext(r.Context(), kind.began, "partition", partition, "err", err)
		return
	}
	e.obs.failures.unavailable(e.obs, r.Context(), partition, e.ID, err, kind)
}

// Available records that a partition's database answered, which may end its outage.
func Available(r *http.Request, partition string) {
	if e := From(r.Context()); e != nil {
		e.obs.failures.available(e.obs, r.Context(), partition)
	}
}

// Panic logs a recovered panic with its stack and counts it; the request's failure is then
// logged, so a problem document written after it logs nothing more.
func Panic(r *http.Request, v any, stack []byte) {
	e := From(r.Context())
	if e == nil {
		slog.ErrorContext(r.Context(), "panic", "path", engine.ShownPath(r.URL.EscapedPath()), "panic", fmt.Sprint(v), "stack", string(stack))
		return
	}
	e.logged = true
	e.obs.panics.Inc()
	e.obs.failures.error(e.obs, r.Context(), "panic", slog.String("request_id", e.ID), slog.String("method", engine.ShownName(r.Method)),
		slog.String("route", e.Route()), slog.String("partition", e.Partition), slog.String("panic", fmt.Sprint(v)),
		slog.String("stack", string(stack)))
}

// Abort records that the handler broke the connection on purpose (http.ErrAbortHandler).
func Abort(r *http.Request) {
	if e := From(r.Context()); e != nil {
		e.aborted = true
	}
}

func (f *failureLog) unavailable(o *Observer, ctx context.Context, partition, id string, err error, kind *outageKind) {
	now := time.Now()
	f.mu.Lock()
	out := f.outages[partition]
	if out == nil {
		if f.outages == nil {
			f.outages = map[string]*outage{}
		}
		f.outages[partition] = &outage{kind: kind, since: now, reported: now, last: now, total: 1}
		f.down.Add(1)
		f.mu.Unlock()
		o.logger().LogAttrs(ctx, slog.LevelError, kind.began, slog.String("partition", partition),
			slog.String("request_id", id), slog.Any("err", err))
		return
	}
	out.failed++
	out.total++
	out.last = now
	if now.Sub(out.reported) < OutageReportEvery {
		f.mu.Unlock()
		return
	}
	failed, lasted, msg := out.failed, now.Sub(out.since), out.kind.still
	out.failed, out.reported = 0, now
	f.mu.Unlock()
	o.logger().LogAttrs(ctx, slog.LevelWarn, msg, slog.String("partition", partition),
		slog.Duration("for", lasted.Round(time.Millisecond)), slog.Int("failed_requests", failed),
		slog.String("request_id", id), slog.Any("err", err))
}

func (f *failureLog) available(o *Observer, ctx context.Context, partition string) {
	if f.down.Load() == 0 {
		return
	}
	now := time.Now()
	f.mu.Lock()
	out := f.outages[partition]
	if out == nil || now.Sub(out.last) < OutageQuiet {
		f.mu.Unlock()
		return
	}
	delete(f.outages, partition)
	f.down.Add(-1)
	f.mu.Unlock()
	o.logger().LogAttrs(ctx, slog.LevelInfo, out.kind.ended, slog.String("partition", partition),
		slog.Duration("after", now.Sub(out.since).Round(time.Millisecond)), slog.Int("failed_requests", out.total))
}

// error logs a failure line unless this second's lines are spent.
func (f *failureLog) error(o *Observer, ctx context.Context, msg string, attrs ...slog.Attr) {
	f.log(o, ctx, &f.errors, ErrorLinesPerSecond, slog.LevelError, msg, attrs...)
}

// log writes a line at level unless budget's lines of this second are spent; the first line
// written after some were left out says how many (lines_left_out).
func (f *failureLog) log(o *Observer, ctx context.Context, budget *lineBudget, perSecond int, level slog.Level, msg string, attrs ...slog.Attr) {
	f.mu.Lock()
	left, ok := budget.take(time.Now().Unix(), perSecond)
	f.mu.Unlock()
	if !ok {
		return
	}
	if left > 0 {
		attrs = append(attrs, slog.Int("lines_left_out", left))
	}
	o.logger().LogAttrs(ctx, level, msg, attrs...)
}
