package idempotency

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/observe"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// Retention is how long an answer is kept for retries: 24 hours, as the draft suggests and as
// clients that retry across a day's outage need. The purge removes it afterwards, and a key
// whose answer has expired is a new key.
const Retention = 24 * time.Hour

// Lease is how long a request holds its key while it is being answered. A retry within the
// lease gets a 409; past it, the key is taken to belong to a process that died while answering
// and a retry claims it again and does the work. It exceeds the longest a create or command
// takes (a few statements, each bounded by --database-timeout, 10 s by default), so
// that a slow first request is never done twice.
const Lease = 2 * time.Minute

// InFlightRetryAfter is the Retry-After, in seconds, of the 409 for a key in flight.
const InFlightRetryAfter = "1"

// MaxAnswerBytes caps the answer kept for a key. Creates and commands answer one record, far
// below it; a larger answer is sent but not kept (a retry does the work again) and logged.
const MaxAnswerBytes = 2 << 20

// Config configures a Keeper; the zero value is the production one.
type Config struct {
	// Now is the clock; nil means time.Now. Tests move it past Retention and Lease.
	Now func() time.Time
	// Stop, when set, is asked after the wrapped handler returns and before its answer is
	// kept; true abandons the request there, keeping and releasing nothing, as a process
	// killed at that moment would (its client gets a 500). The tests of that crash set it;
	// nil, in production, never stops.
	Stop func(*http.Request) bool
}

// Keeper applies the protocol to the routes it wraps. It keeps nothing in memory but the
// descriptor of its keys: every key lives in the partition's database, so any process sharing
// it honours any key.
type Keeper struct {
	now  func() time.Time
	stop func(*http.Request) bool
	t    *table
}

// New returns a Keeper that stores its keys in the IdempotencyKey descriptor of reg, resolved
// here once with the members and filter it uses: a registry without them is an error, so that
// the server does not start rather than fail every request that sends a key.
func New(reg *engine.Registry, cfg Config) (*Keeper, error) {
	t, err := tableOf(reg)
	if err != nil {
		return nil, err
	}
	k := &Keeper{now: cfg.Now, stop: cfg.Stop, t: t}
	if k.now == nil {
		k.now = time.Now
	}
	return k, nil
}

// FromContext is the store of a v2 request: its partition's (engine.StoreFrom).
func FromContext(r *http.Request) *engine.Store { return engine.StoreFrom(r.Context()) }

// Wrap returns next, a command, behind the protocol. It must run after authentication: the
// key belongs to the caller (auth.FromContext). A request without Idempotency-Key goes to next
// untouched. With one, the body (at most limit bytes, as next reads it) is read first, and:
//   - a key not seen (or forgotten, after Retention) is claimed, next answers, and the answer
//     is kept for Retention when it is a success: the work was done, and a retry must not do
//     it again. The transaction that commits next's work also marks the key done
//     (engine.WithCommit), on the claim's row only: a request whose lease ended and whose key
//     another request claimed has its work rolled back and is answered as in flight (409).
//     A 4xx or 5xx is sent but not kept, and the key is released unless its work is done:
//     such a request changed nothing (every verb and command is all or nothing), so its
//     retry, after the client mends the body or the caller is granted what it lacked, is
//     served afresh;
//   - a key kept with the same method, path and body gets the kept answer, with
//     Idempotent-Replayed: true, and next does nothing;
//   - a key whose work is done but whose answer was never kept (its process stopped in
//     between, or the answer was too large) is a 409 problem without Retry-After saying so,
//     once the first request's lease has ended; next does nothing;
//   - a key first used with another method, path or body is a 422 problem;
//   - a key whose first request is still being answered is a 409 problem with Retry-After:
//     the work is done once, and the client retries to read its answer.
//
// store gives the database of the request's partition.
func (k *Keeper) Wrap(store func(*http.Request) *engine.Store, limit int64, next problem.HandlerFunc) problem.HandlerFunc {
	return k.wrap(store, limit, next, nil, nil)
}

// Found answers the record with key as a create of it answers (201, Location, ETag, the
// record as it is now), or fails with engine.ErrNotFound when it has since been deleted, or
// with ErrNotShown when the caller may not read it.
type Found func(w http.ResponseWriter, r *http.Request, key []any) error

// ErrNotShown is what a Found returns, without reading the record, when the caller may create
// records of the group but not read them: the retry is then a 409 without Retry-After whose
// Location names the record created, as the create's answer did, and nothing more of it.
var ErrNotShown = errors.New("idempotency: the caller may not read the record it created")

// WrapCreate is Wrap for next, a create of records of res. The work's transaction keeps the
// key of the record it created with its mark, and the retry of a request whose answer was
// never kept is answered by found with that record, marked Idempotent-Replayed, or with a 404
// problem when it has since been deleted, or with a 409 naming it when found says the caller
// may not read it (ErrNotShown).
func (k *Keeper) WrapCreate(store func(*http.Request) *engine.Store, limit int64, res *engine.Resource, next problem.HandlerFunc, found Found) problem.HandlerFunc {
	return k.wrap(store, limit, next, res, found)
}

func (k *Keeper) wrap(store func(*http.Request) *engine.Store, limit int64, next problem.HandlerFunc, res *engine.Resource, found Found) problem.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		key, err := keyOf(r)
		if err != nil {
			return err
		}
		if key == "" {
			return next(w, r)
		}
		p := auth.FromContext(r.Context())
		if p == nil {
			return errors.New("idempotency: a route behind Idempotency-Key was served without authentication")
		}
		body, err := request.Read(w, r, limit)
		if err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		c := call{st: store(r), hash: keyHash(p, key), fp: fingerprint(r, body), res: res, found: found}
		return k.serve(w, r, c, next)
	}
}

// call is one request with a key.
type call struct {
	st       *engine.Store
	hash, fp string
	// res is the resource a create stores, nil for a command; found answers its record.
	res   *engine.Resource
	found Found
}

// serve runs the protocol for one key.
func (k *Keeper) serve(w http.ResponseWriter, r *http.Request, c call, next problem.HandlerFunc) error {
	// What the keeper writes to the database is written even when the client leaves: the work
	// it guards has been done (statements run to their end, see engine), and its answer must
	// be found by the retry.
	ctx := context.WithoutCancel(r.Context())
	st, t, hash, fp := c.st, k.t, c.hash, c.fp
	now := k.now()
	holder := newHolder()
	cur, err := t.claim(ctx, st, hash, fp, holder, now, now.Add(Lease))
	switch {
	case errors.Is(err, errBusy):
		return k.inFlight(r)
	case err != nil:
		return err
	case cur != nil && cur.fingerprint != fp:
		observe.Idempotency(r.Context(), observe.IdempotencyMismatch)
		return problem.New(http.StatusUnprocessableEntity,
			"This Idempotency-Key was first used with another request (method, path or body); send a new key for a new request.")
	case cur != nil && cur.answer == nil && (cur.done.IsZero() || cur.holder != "" && now.Before(cur.claimed.Add(Lease))):
		// In flight, or done and its holder is still keeping its answer.
		return k.inFlight(r)
	case cur != nil && cur.answer == nil:
		observe.Idempotency(r.Context(), observe.IdempotencyLost)
		return lost(w, r, c, cur)
	case cur != nil:
		observe.Idempotency(r.Context(), observe.IdempotencyReplayed)
		return replay(w, cur.answer)
	}
	// The key is ours: answer, keep the answer, and give the key up if anything goes wrong
	// (a panic included) so that the retry is not refused until the lease ends; if the work
	// was done, end the lease instead, so that the retry is told so at once.
	work := &engine.Commit{Of: c.res, Write: func(ctx context.Context, tx *engine.Store, created engine.Record) error {
		var record []string
		if created != nil {
			for i := range c.res.Key {
				record = append(record, c.res.KeySegment(created, i))
			}
		}
		return t.mark(ctx, tx, hash, holder, k.now(), record)
	}}
	kept := false
	defer func() {
		if kept {
			return
		}
		var err error
		if work.Committed() {
			err = t.letGo(ctx, st, hash, holder)
		} else {
			err = t.release(ctx, st, hash, holder)
		}
		if err != nil {
			slog.ErrorContext(ctx, "idempotency: the key could not be released; retries get 409 until its lease ends",
				"request_id", observe.RequestID(ctx), "lease", Lease, "err", err)
		}
	}()
	rec := newRecorder()
	failed := false
	if err := next(rec, r.WithContext(engine.WithCommit(r.Context(), work))); err != nil {
		if errors.Is(err, errLost) {
			// The work rolled back: another request claimed the key after this one's lease.
			slog.WarnContext(ctx, "idempotency: the work ended after the key's lease, which another request holds; it was undone",
				"request_id", observe.RequestID(ctx), "lease", Lease)
			return k.inFlight(r)
		}
		failed = true
		problem.Write(rec, r, err)
	}
	if k.stop != nil && k.stop(r) {
		kept = true // a process stopped here keeps nothing and releases nothing
		return errors.New("idempotency: stopped after the work (Config.Stop)")
	}
	a := rec.answer()
	if failed || a.status >= 400 || len(a.body) > MaxAnswerBytes {
		observe.Idempotency(r.Context(), observe.IdempotencyNotStored)
		if !failed && a.status < 400 {
			slog.WarnContext(ctx, "idempotency: the answer is too large to keep; a retry will be told the work was done",
				"request_id", observe.RequestID(ctx), "bytes", len(a.body))
		}
		return rec.send(w)
	}
	done := k.now()
	switch err := t.complete(ctx, st, hash, fp, holder, done, done.Add(Retention), a); {
	case err == nil:
		kept = true
		observe.Idempotency(r.Context(), observe.IdempotencyStored)
	case errors.Is(err, errLost):
		kept = true // nothing of ours is left to release
		observe.Idempotency(r.Context(), observe.IdempotencyNotStored)
		slog.WarnContext(ctx, "idempotency: answered after the key's lease ended; the answer is not kept",
			"request_id", observe.RequestID(ctx), "lease", Lease)
	default:
		observe.Idempotency(r.Context(), observe.IdempotencyNotStored)
		slog.ErrorContext(ctx, "idempotency: the answer could not be kept; a retry will be told the work was done",
			"request_id", observe.RequestID(ctx), "err", err)
	}
	return rec.send(w)
}

// lost answers the retry of a request whose work is done but whose answer was never kept: a
// create with its record as it is now, marked replayed (or a 404 when it has been deleted, or
// a 409 with its Location when the caller may not read it), a command with a 409 saying that
// it was done. The work is never done again.
func lost(w http.ResponseWriter, r *http.Request, c call, cur *row) error {
	done := cur.done.UTC().Format(time.RFC3339)
	if c.found != nil && cur.record != nil {
		key, err := c.res.ParseKey(cur.record)
		if err == nil {
			rec := newRecorder()
			err = c.found(rec, r, key)
			if err == nil {
				rec.header.Set(ReplayedHeader, "true")
				return rec.send(w)
			}
		}
		if errors.Is(err, ErrNotShown) {
			loc := "/v2/" + c.st.Partition + "/" + c.res.Path
			for _, seg := range cur.record {
				loc += "/" + url.PathEscape(seg)
			}
			p := problem.New(http.StatusConflict,
				"The request with this Idempotency-Key created %s at %s, but its answer was lost before it could be kept; it is not done again. The record is not shown: you may create %s records but not read them.", loc, done, c.res.Path)
			p.Header = http.Header{"Location": {loc}}
			return p
		}
		if engine.IsNotFound(err) {
			return problem.New(http.StatusNotFound,
				"The request with this Idempotency-Key created a record at %s, which has since been deleted or is no longer visible to you; its answer was not kept, and the record is not created again.", done)
		}
		return err
	}
	return problem.New(http.StatusConflict,
		"The request with this Idempotency-Key was done at %s, but its answer was lost before it could be kept; it is not done again. Read the current state of what it changed instead of retrying.", done)
}

// inFlight is the 409 of a key whose first request is still being answered.
func (k *Keeper) inFlight(r *http.Request) error {
	observe.Idempotency(r.Context(), observe.IdempotencyInFlight)
	p := problem.New(http.StatusConflict,
		"A request with this Idempotency-Key is still being answered; retry after Retry-After seconds to get its answer.")
	p.Header = http.Header{"Retry-After": {InFlightRetryAfter}}
	return p
}

// replay sends a kept answer.
func replay(w http.ResponseWriter, a *answer) error {
	for name, vs := range a.header {
		w.Header()[name] = append([]string(nil), vs...)
	}
	w.Header().Set(ReplayedHeader, "true")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	_, err := w.Write(a.body)
	return err
}
