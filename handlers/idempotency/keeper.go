package idempotency

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
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
}

// Keeper applies the protocol to the routes it wraps. It keeps nothing in memory but the
// descriptor of its keys: every key lives in the partition's database, so any process sharing
// it honours any key.
type Keeper struct {
	now func() time.Time
	t   *table
}

// New returns a Keeper that stores its keys in the IdempotencyKey descriptor of reg, resolved
// here once with the members and filter it uses: a registry without them is an error, so that
// the server does not start rather than fail every request that sends a key.
func New(reg *engine.Registry, cfg Config) (*Keeper, error) {
	t, err := tableOf(reg)
	if err != nil {
		return nil, err
	}
	k := &Keeper{now: cfg.Now, t: t}
	if k.now == nil {
		k.now = time.Now
	}
	return k, nil
}

// FromContext is the store of a v2 request: its partition's (engine.StoreFrom).
func FromContext(r *http.Request) *engine.Store { return engine.StoreFrom(r.Context()) }

// Wrap returns next behind the protocol. It must run after authentication: the key belongs
// to the caller (auth.FromContext). A request without Idempotency-Key goes to next untouched.
// With one, the body (at most limit bytes, as next reads it) is read first, and:
//   - a key not seen (or forgotten, after Retention) is claimed, next answers, and the answer
//     is kept for Retention when it is a success: the work was done, and a retry must not do
//     it again. A 4xx or 5xx is sent but not kept, and the key is released: such a request
//     changed nothing (every verb and command is all or nothing), so its retry, after the
//     client mends the body or the caller is granted what it lacked, is served afresh;
//   - a key kept with the same method, path and body gets the kept answer, with
//     Idempotent-Replayed: true, and next does nothing;
//   - a key first used with another method, path or body is a 422 problem;
//   - a key whose first request is still being answered is a 409 problem with Retry-After:
//     the work is done once, and the client retries to read its answer.
//
// store gives the database of the request's partition.
func (k *Keeper) Wrap(store func(*http.Request) *engine.Store, limit int64, next problem.HandlerFunc) problem.HandlerFunc {
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
		return k.serve(w, r, store(r), k.t, keyHash(p, key), fingerprint(r, body), next)
	}
}

// serve runs the protocol for one key.
func (k *Keeper) serve(w http.ResponseWriter, r *http.Request, st *engine.Store, t *table, hash, fp string, next problem.HandlerFunc) error {
	// What the keeper writes to the database is written even when the client leaves: the work
	// it guards has been done (statements run to their end, see engine), and its answer must
	// be found by the retry.
	ctx := context.WithoutCancel(r.Context())
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
	case cur != nil && cur.answer == nil:
		return k.inFlight(r)
	case cur != nil:
		observe.Idempotency(r.Context(), observe.IdempotencyReplayed)
		return replay(w, cur.answer)
	}
	// The key is ours: answer, keep the answer, and give the key up if anything goes wrong
	// (a panic included) so that the retry is not refused until the lease ends.
	kept := false
	defer func() {
		if !kept {
			if _, err := t.drop(ctx, st, hash, holder); err != nil {
				slog.ErrorContext(ctx, "idempotency: the key could not be released; retries get 409 until its lease ends",
					"request_id", observe.RequestID(ctx), "lease", Lease, "err", err)
			}
		}
	}()
	rec := newRecorder()
	failed := false
	if err := next(rec, r); err != nil {
		failed = true
		problem.Write(rec, r, err)
	}
	a := rec.answer()
	if failed || a.status >= 400 || len(a.body) > MaxAnswerBytes {
		observe.Idempotency(r.Context(), observe.IdempotencyNotStored)
		if !failed && a.status < 400 {
			slog.WarnContext(ctx, "idempotency: the answer is too large to keep; a retry will do the work again",
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
		slog.ErrorContext(ctx, "idempotency: the answer could not be kept; a retry will do the work again",
			"request_id", observe.RequestID(ctx), "err", err)
	}
	return rec.send(w)
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
