package observe

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"credo/engine"
	"credo/internal/reqctx"
)

// StatusClientClosed is the status the access line and metrics record for a request whose
// client went away before an answer was written (nginx's 499); nothing is sent.
const StatusClientClosed = 499

// Handler returns next behind the observer: the request gets its id (the client's
// X-Request-Id when it is acceptable, a new one otherwise), echoed on the response before next
// runs; the request is counted in flight, and when next returns, in the request metrics and
// one access line. The request's context from here on is a reqctx.Context, in which the
// middleware behind records what it learns (route variables, store, caller) without copying
// the request again.
func (o *Observer) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(RequestIDHeader)
		if !validID(id) {
			id = newID()
		}
		w.Header()[RequestIDHeader] = []string{id}
		rec := &recorder{w: w, e: Entry{ID: id, obs: o}}
		rec.ctx.Init(r.Context())
		r = r.WithContext(reqctx.With(&rec.ctx, entryKey{}, &rec.e))
		o.inFlight.Inc()
		defer o.finish(rec, r, start)
		next.ServeHTTP(rec, r)
	})
}

// finish counts and logs a request; it runs even when the handler aborts with a panic.
func (o *Observer) finish(rec *recorder, r *http.Request, start time.Time) {
	o.inFlight.Dec()
	e := &rec.e
	status := e.status
	if status == 0 {
		status = http.StatusOK // what net/http sends for a handler that wrote nothing
		if r.Context().Err() != nil || e.aborted {
			status = StatusClientClosed
		}
	}
	end := time.Now() // the line's time too: one reading of the clock, not two
	elapsed := end.Sub(start)
	rt := e.route
	if rt == nil {
		rt = o.unmatched
	}
	s := rt.seriesOf(methodLabel(r.Method), status)
	s.count.Inc()
	s.duration.Observe(elapsed.Seconds())
	if status < 300 && e.Partition != "" {
		o.failures.available(o, r.Context(), e.Partition)
	}
	level := slog.LevelInfo
	if rt.Probe {
		level = slog.LevelDebug
	}
	h := o.logger().Handler()
	if !h.Enabled(r.Context(), level) {
		return
	}
	line := accessLine{time: end, level: level, id: e.ID, method: engine.ShownName(r.Method), route: rt.Template,
		partition: e.Partition, status: status, bytes: e.bytes, duration: elapsed, user: e.User,
		remote: r.RemoteAddr, aborted: e.aborted} // only aborted requests say so
	if o.client != nil {
		line.client, line.hasClient = o.client(r), true
	}
	if o.access != nil && o.access.write(&line) {
		return
	}
	// The record goes to the handler directly: Logger.LogAttrs would also walk the stack for
	// the caller's program counter (1% of a get's CPU), which the access line never shows.
	_ = h.Handle(r.Context(), line.record())
}

// recorder is the ResponseWriter that handlers behind the observer write to: it notes the
// status and size, and drops a second WriteHeader instead of letting net/http log it. It also
// holds the request's entry and context, so that the three cost one allocation.
type recorder struct {
	w   http.ResponseWriter
	e   Entry
	ctx reqctx.Context
}

func (rec *recorder) Header() http.Header { return rec.w.Header() }

func (rec *recorder) WriteHeader(status int) {
	if rec.e.status != 0 {
		return // superfluous: the first status is on the wire
	}
	if status >= 100 && status < 200 && status != http.StatusSwitchingProtocols {
		rec.w.WriteHeader(status) // informational; the final status follows
		return
	}
	rec.e.status = status
	rec.w.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.e.status == 0 {
		rec.e.status = http.StatusOK
	}
	n, err := rec.w.Write(b)
	rec.e.bytes += int64(n)
	rec.cutOff(err)
	return n, err
}

// ReadFrom keeps net/http's sendfile path for files copied to the response.
func (rec *recorder) ReadFrom(src io.Reader) (int64, error) {
	if rec.e.status == 0 {
		rec.e.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := rec.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(struct{ io.Writer }{rec.w}, src)
	}
	rec.e.bytes += n
	rec.cutOff(err)
	return n, err
}

// cutOff notes that the answer did not reach the client whole when writing it failed; a body
// net/http refuses to send (of a 204 or 304) is not written, not cut off.
func (rec *recorder) cutOff(err error) {
	if err != nil && !errors.Is(err, http.ErrBodyNotAllowed) {
		rec.e.aborted = true
	}
}

// Flush sends buffered data; http.ResponseController finds it, and the rest, through Unwrap.
func (rec *recorder) Flush() {
	if rec.e.status == 0 {
		rec.e.status = http.StatusOK
	}
	_ = http.NewResponseController(rec.w).Flush()
}

// Unwrap gives http.ResponseController the writer of net/http, for deadlines and hijacking.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.w }

var (
	_ http.Flusher  = (*recorder)(nil)
	_ io.ReaderFrom = (*recorder)(nil)
)
