package engine

import (
	"context"
	"fmt"
)

// Create fills what the draft omits and stores it as a new record of r. Within one
// organization's scope, a scoped record of another organization is refused and an omitted
// organization becomes the scope's. A key member given as the nil UUID is refused (see
// keyOrigin). The draft is completed in place.
func (s *Store) Create(ctx context.Context, r *Resource, d Draft, scope Scope) (_ Record, err error) {
	defer wrap(&err, "create", r.Name, nil)
	org, err := writeOf(r, d, scope)
	if err != nil {
		return nil, err
	}
	return s.insert(ctx, r, d, org)
}

// keyOrigin says who chose a new record's key, and so whether it may be the nil UUID.
type keyOrigin int

const (
	// clientKey is a key a client's body gave (Create): the nil UUID in it is a typed
	// client's unset Guid (decisions §4 refuses it in a required reference for the same
	// reason), and stored it names a record that is nobody's choice, so it is a 400.
	clientKey keyOrigin = iota
	// fileKey is a key an operator's file gave (bulk loads such as credo load) or the
	// server chose (content): kept as it is, so that records migrated from the original
	// platform keep their keys, the nil UUID included.
	fileKey
)

// writeOf checks the draft and scope of a write of r and returns the organization its SQL
// limits r to ("" for none).
func writeOf(r *Resource, d Draft, scope Scope) (string, error) {
	if err := d.of(r); err != nil {
		return "", err
	}
	if err := scope.check(); err != nil {
		return "", err
	}
	return scope.orgFor(r), nil
}

func (s *Store) insert(ctx context.Context, r *Resource, d Draft, org string) (Record, error) {
	if err := s.prepareNew(r, d, org, clientKey); err != nil {
		return nil, err
	}
	rec := d.rec
	if r.storedOutput {
		if err := s.checkAndInsert(ctx, r, rec); err != nil {
			return nil, err
		}
		// The record as written is the full record, once its write-only members are gone:
		// no record the engine returns carries them (decisions §7).
		for _, f := range r.Fields {
			if f.WriteOnly {
				rec[f.Index] = nil
			}
		}
		return rec, nil
	}
	// A record with computed members is read back in the insert's transaction: read after
	// the commit, a concurrent delete of the new key made a create that committed answer 404
	// (and a 4xx frees the request's Idempotency-Key, so its retry created the record again).
	var out Record
	write := func(st *Store) (err error) {
		if err = st.checkAndInsert(ctx, r, rec); err == nil {
			out, err = st.get(ctx, r, keyOf(r, rec), nil, "")
		}
		return err
	}
	if s.inTx {
		return out, write(s)
	}
	return out, s.Transaction(ctx, write)
}

// checkAndInsert inserts rec after the write check that ctx carries for r, if any; the check
// and the insert are then one transaction, so that what the check reads (and locks, see
// Serialize) is what the insert is judged against, as for updates, patches and deletes. A
// Commit that ctx carries (WithCommit) is told of the record and, outside a transaction,
// makes the insert one, so that its Write commits with the insert.
func (s *Store) checkAndInsert(ctx context.Context, r *Resource, rec Record) error {
	check, c := writeCheck(ctx, r), commitOf(ctx)
	write := func(st *Store) error {
		if check != nil {
			if err := r.runCheck(ctx, check, st, nil, rec); err != nil {
				return err
			}
		}
		if err := st.insertRow(ctx, r, rec); err != nil {
			return translate(s, r, err)
		}
		if c != nil {
			c.note(r, rec)
		}
		return nil
	}
	if s.inTx || check == nil && c == nil {
		return write(s)
	}
	return s.Transaction(ctx, write)
}

// prepareNew gives a new record (the draft's, completed in place) its key, organization,
// defaults and derived members, and validates it.
func (s *Store) prepareNew(r *Resource, d Draft, org string, origin keyOrigin) error {
	rec, present := d.rec, d.given
	if len(r.Key) == 1 && r.Key[0].Type == TypeUUID && (!present[r.Key[0].Index] || rec[r.Key[0].Index] == nil) &&
		(d.failed == nil || !d.failed[r.Key[0].Index]) {
		rec[r.Key[0].Index] = NewID()
		present[r.Key[0].Index] = true
	}
	verr := d.problemsOfWrite()
	claimScope(r, rec, present, org, verr)
	requireKey(r, present, d.failed, verr)
	if origin == clientKey {
		refuseNilKey(r, rec, present, verr)
	}
	return prepare(r, rec, present, present, d.failed, verr)
}

// refuseNilKey adds to verr each uuid member of a new record's key that the draft gives as
// the nil UUID and nothing replaced (claimScope makes an omitted organization the caller's).
// A required one is complete's to name, in its own words.
func refuseNilKey(r *Resource, rec Record, present []bool, verr *ValidationError) {
	for _, k := range r.Key {
		if k.Type == TypeUUID && present[k.Index] && rec[k.Index] == NilUUID && !k.Required {
			verr.Add(k.Name, k.Name+" is part of the key and cannot be the nil UUID "+NilUUID)
		}
	}
}

// requireKey adds to verr each member of a new record's key that the draft omits and nothing
// fills (a generated UUID key, the scope's organization, a default): a key names the record,
// and its zero value (the nil UUID, "") named one silently, so that a second such row was a
// conflict over a key nobody sent. A null member is complete's to refuse, and a required one
// complete's to name.
func requireKey(r *Resource, present, failed []bool, verr *ValidationError) {
	for _, k := range r.Key {
		if present[k.Index] || failed != nil && failed[k.Index] || k.Default != "" || k.Required && !k.ReadOnly {
			continue
		}
		verr.Add(k.Name, k.Name+" is required: it is part of the key")
	}
}

// problemsOfWrite starts the problems of a write of the draft with those its decoding found
// (a copy: the draft's own stay as they are).
func (d Draft) problemsOfWrite() *ValidationError {
	verr := &ValidationError{}
	if d.problems != nil {
		verr.Detail = d.problems.Detail
		for m, msgs := range d.problems.Fields {
			for _, msg := range msgs {
				verr.Add(m, msg)
			}
		}
	}
	return verr
}

// claimScope puts an omitted organization (null, or the nil UUID where the member is not
// required) of a directly scoped record to org and adds another one to verr. The nil UUID in
// a required organization is left for complete to refuse.
func claimScope(r *Resource, rec Record, present []bool, org string, verr *ValidationError) {
	if org == "" {
		return
	}
	for _, sc := range r.Scope {
		if sc.Via != nil || sc.Any != nil {
			continue
		}
		i := sc.Field.Index
		switch {
		case rec[i] == NilUUID && sc.Field.Required:
		case !present[i] || rec[i] == nil || rec[i] == NilUUID:
			rec[i], present[i] = org, true
		case rec[i] != org:
			verr.Add(sc.Field.Name, fmt.Sprintf("%s must be your organization (%s)", sc.Field.Name, org))
		}
	}
}

// prepare completes and validates a record, runs the beforeWrite hooks and holds what they
// changed to the same rules (runBeforeWrite), and hashes the hashed members that the client
// gave in this write (given). verr holds the problems the write found before (decoding, the
// key, the organization); failed marks the members that did not decode (nil: none), which
// are neither checked nor missing. It is the one place a write's problems are reported: every
// one that needs no database, together, and no hook runs on a record with problems.
func prepare(r *Resource, rec Record, present, given, failed []bool, verr *ValidationError) error {
	if err := r.complete(rec, present, given, failed, verr); err != nil {
		return err
	}
	if !verr.Empty() {
		return verr
	}
	if err := r.runBeforeWrite(rec); err != nil {
		return err
	}
	return hashGiven(r, rec, given)
}

func keyOf(r *Resource, rec Record) []any {
	key := make([]any, len(r.Key))
	for i, k := range r.Key {
		key[i] = rec[k.Index]
	}
	return key
}
