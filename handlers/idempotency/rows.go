package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"credo/engine"
)

// recordName is the internal table's descriptor (resources/internal/idempotency-keys.yaml).
const recordName = "IdempotencyKey"

// table is the descriptor and the members the package reads and writes.
type table struct {
	r                                       *engine.Resource
	hash, holder, expires                   *engine.Field
	expiresBefore                           *engine.Filter
	fingerprint, status, header, body, made *engine.Field
	workDone, workRecord                    *engine.Field
}

// tableOf resolves the descriptor and its members in reg (New, once); their absence is a build
// error of the registry, reported rather than panicking in a request.
func tableOf(reg *engine.Registry) (*table, error) {
	r, ok := reg.ByName(recordName)
	if !ok {
		return nil, fmt.Errorf("idempotency: no %s descriptor", recordName)
	}
	t := &table{r: r}
	for name, dst := range map[string]**engine.Field{"KeyHash": &t.hash, "Holder": &t.holder, "Expires": &t.expires,
		"Fingerprint": &t.fingerprint, "AnswerStatus": &t.status, "AnswerHeader": &t.header, "AnswerBody": &t.body,
		"KeyCreated": &t.made, "WorkDone": &t.workDone, "WorkRecord": &t.workRecord} {
		f, ok := r.Member(name)
		if !ok {
			return nil, fmt.Errorf("idempotency: %s has no member %s", r.Name, name)
		}
		*dst = f
	}
	if t.expiresBefore, ok = r.Filter("ExpiresBefore"); !ok {
		return nil, fmt.Errorf("idempotency: %s has no ExpiresBefore filter", r.Name)
	}
	return t, nil
}

// answer is a kept answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// row is a key's stored state.
type row struct {
	fingerprint string
	expires     time.Time
	// claimed is when the holder claimed the key: its lease ends Lease later, or when the
	// holder lets it go (holder "", see letGo).
	claimed time.Time
	holder  string
	// done is when the work committed (zero: not yet, or a request that committed none);
	// record is the key of the record a create stored then, as path segments (nil: none).
	done   time.Time
	record []string
	// answer is nil until the answer is kept.
	answer *answer
}

func (t *table) read(rec engine.Record) (row, error) {
	out := row{}
	out.fingerprint, _ = rec[t.fingerprint.Index].(string)
	exp, _ := rec[t.expires.Index].(engine.DateTime)
	out.expires = exp.Time
	made, _ := rec[t.made.Index].(engine.DateTime)
	out.claimed = made.Time
	out.holder, _ = rec[t.holder.Index].(string)
	done, _ := rec[t.workDone.Index].(engine.DateTime)
	out.done = done.Time
	if segs, _ := rec[t.workRecord.Index].(string); segs != "" {
		if err := json.Unmarshal([]byte(segs), &out.record); err != nil {
			return out, fmt.Errorf("idempotency: stored record key: %w", err)
		}
	}
	st, ok := rec[t.status.Index].(int64)
	if !ok {
		return out, nil
	}
	a := &answer{status: int(st), header: http.Header{}}
	if h, _ := rec[t.header.Index].(string); h != "" {
		if err := json.Unmarshal([]byte(h), &a.header); err != nil {
			return out, fmt.Errorf("idempotency: stored header: %w", err)
		}
	}
	b, _ := rec[t.body.Index].(string)
	var err error
	if a.body, err = base64.StdEncoding.DecodeString(b); err != nil {
		return out, fmt.Errorf("idempotency: stored body: %w", err)
	}
	out.answer = a
	return out, nil
}

// newRow is the record of a key: in flight (a nil answer) or answered.
func (t *table) newRow(hash, fp, holder string, expires, now time.Time, a *answer) (engine.Draft, error) {
	members := map[string]any{t.hash.Name: hash, t.fingerprint.Name: fp, t.holder.Name: holder,
		t.expires.Name: dateTime(expires), t.made.Name: dateTime(now)}
	if a != nil {
		h, err := json.Marshal(a.header)
		if err != nil {
			return engine.Draft{}, fmt.Errorf("idempotency: encode header: %w", err)
		}
		members[t.status.Name] = int64(a.status)
		members[t.header.Name] = string(h)
		members[t.body.Name] = base64.StdEncoding.EncodeToString(a.body)
	}
	d, err := t.r.DraftOf(members)
	if err != nil {
		return engine.Draft{}, fmt.Errorf("idempotency: %w", err)
	}
	return d, nil
}

func dateTime(t time.Time) engine.DateTime {
	return engine.DateTime{Time: t.UTC().Truncate(100 * time.Nanosecond)}
}

// newHolder returns a lease's random identity.
func newHolder() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// errBusy: the key's row changed under every attempt to claim it; the request is answered as
// in flight (409) and the client retries.
var errBusy = errors.New("idempotency: the key changed during every attempt to claim it")

// claim makes the caller the holder of the key, or returns its row. The claim is one INSERT
// of the key's primary key: of two processes inserting it at once, the database lets exactly
// one succeed, and the other reads the winner's row. A row past its Expires (a forgotten
// answer, or the lease of a process that died while answering) is removed, by key and expiry
// in one DELETE, before the insert is tried again, so that of the callers that find it expired
// one removes it and one inserts.
func (t *table) claim(ctx context.Context, st *engine.Store, hash, fp, holder string, now, leaseEnd time.Time) (*row, error) {
	for range 3 {
		// A fresh draft each attempt: Create completes the one it is given in place.
		d, err := t.newRow(hash, fp, holder, leaseEnd, now, nil)
		if err != nil {
			return nil, err
		}
		_, err = st.Create(ctx, t.r, d, engine.AllOrganizations())
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, engine.ErrConflict) {
			return nil, fmt.Errorf("idempotency: claim: %w", err)
		}
		got, err := st.Get(ctx, t.r, []any{hash}, t.r.Fields, engine.AllOrganizations())
		if engine.IsNotFound(err) {
			continue // its holder gave it up (a 5xx) or it expired since: claim it again
		}
		if err != nil {
			return nil, fmt.Errorf("idempotency: read: %w", err)
		}
		cur, err := t.read(got)
		if err != nil {
			return nil, err
		}
		// Judged at the precision the expiry is stored and the DELETE compares at (dateTime),
		// so that a row found expired is one the DELETE removes.
		if !cur.expires.Before(dateTime(now).Time) {
			return &cur, nil
		}
		if _, err := st.DeleteMatching(ctx, t.r, engine.Query{Conds: []engine.Cond{
			{Field: t.hash, Op: engine.MatchEq, Value: hash},
			{Field: t.expiresBefore.Field, Op: t.expiresBefore.Op, Value: dateTime(now)},
		}}, engine.AllOrganizations()); err != nil {
			return nil, fmt.Errorf("idempotency: remove the expired key: %w", err)
		}
	}
	return nil, errBusy
}

// errLost: the holder's lease expired and another request claimed the key.
var errLost = errors.New("idempotency: the key's lease expired before the answer was stored; another request holds it")

// mark records, in the transaction tx of the key's work, that the work is done: on the
// holder's row only, so that a holder whose lease ended and whose key another request claimed
// finds no row, and its work rolls back (errLost). The key is then kept until Retention after
// now, answered or not, and record (the path segments of the record a create stored, nil for
// none) is kept with it for the retry of a request whose answer is lost.
func (t *table) mark(ctx context.Context, tx *engine.Store, hash, holder string, now time.Time, record []string) error {
	set := map[*engine.Field]any{t.workDone: dateTime(now), t.expires: dateTime(now.Add(Retention))}
	if record != nil {
		b, err := json.Marshal(record)
		if err != nil {
			return fmt.Errorf("idempotency: encode the record key: %w", err)
		}
		set[t.workRecord] = string(b)
	}
	n, err := tx.SetMatching(ctx, t.r, engine.Query{Conds: t.held(hash, holder)}, set, engine.AllOrganizations())
	switch {
	case err != nil:
		return fmt.Errorf("idempotency: mark the work done: %w", err)
	case n == 0:
		return errLost
	}
	return nil
}

// complete replaces the holder's in-flight row by the answered one, in one transaction, if
// the holder still holds it.
func (t *table) complete(ctx context.Context, st *engine.Store, hash, fp, holder string, now, expires time.Time, a *answer) error {
	d, err := t.newRow(hash, fp, holder, expires, now, a)
	if err != nil {
		return err
	}
	return st.Transaction(ctx, func(tx *engine.Store) error {
		n, err := t.drop(ctx, tx, hash, holder)
		if err != nil {
			return err
		}
		if n == 0 {
			return errLost
		}
		if _, err := tx.Create(ctx, t.r, d, engine.AllOrganizations()); err != nil {
			return fmt.Errorf("idempotency: store the answer: %w", err)
		}
		return nil
	})
}

// drop removes the holder's row of the key (not another holder's); it returns how many rows
// it removed, 0 or 1.
func (t *table) drop(ctx context.Context, st *engine.Store, hash, holder string) (int64, error) {
	return t.dropWhere(ctx, st, t.held(hash, holder))
}

// release gives the key up: it removes the holder's row unless its work is done (marked by
// the work's transaction, which may have committed even when the request then failed), so
// that a retry is served afresh only when nothing was done.
func (t *table) release(ctx context.Context, st *engine.Store, hash, holder string) error {
	_, err := t.dropWhere(ctx, st, append(t.held(hash, holder), engine.Cond{Field: t.workDone, Op: engine.MatchEq, Value: nil}))
	return err
}

// letGo ends the holder's lease on a key whose work is done but whose answer it does not keep
// (the request failed after its work committed, or its answer is too large): the row stays
// done, held by nobody (holder ""), so that a retry is told at once that the work was done
// rather than answered 409 until the lease ends. No holder id is "" (newHolder).
func (t *table) letGo(ctx context.Context, st *engine.Store, hash, holder string) error {
	_, err := st.SetMatching(ctx, t.r, engine.Query{Conds: t.held(hash, holder)}, map[*engine.Field]any{t.holder: ""}, engine.AllOrganizations())
	if err != nil {
		return fmt.Errorf("idempotency: let the key go: %w", err)
	}
	return nil
}

// held is the condition of the holder's row of the key: another holder's row of it is not.
func (t *table) held(hash, holder string) []engine.Cond {
	return []engine.Cond{
		{Field: t.hash, Op: engine.MatchEq, Value: hash},
		{Field: t.holder, Op: engine.MatchEq, Value: holder},
	}
}

func (t *table) dropWhere(ctx context.Context, st *engine.Store, conds []engine.Cond) (int64, error) {
	n, err := st.DeleteMatching(ctx, t.r, engine.Query{Conds: conds}, engine.AllOrganizations())
	if err != nil {
		return 0, fmt.Errorf("idempotency: release: %w", err)
	}
	return n, nil
}
