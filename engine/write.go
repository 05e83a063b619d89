package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Update replaces the record with key by the draft: omitted members become null or zero
// (decisions §4), except write-only members, which keep their stored value (a client cannot
// read them to send them back). A draft key that differs from the path is a 400. A missing
// record is an ErrNotFound whatever the draft's members say (see MissingFirst). Without a
// write check it reads nothing stored to write (the beforeWrite hooks derive members from the
// draft alone), so its one UPDATE statement is atomic.
func (s *Store) Update(ctx context.Context, r *Resource, key []any, d Draft, scope Scope) (err error) {
	defer wrap(&err, "update", r.Name, key)
	org, err := writeOf(r, d, scope)
	if err != nil {
		return err
	}
	rec, present, verr := d.rec, d.given, d.problemsOfWrite()
	pinKey(r, rec, present, key, verr)
	claimScope(r, rec, present, org, verr)
	if err := prepare(r, rec, present, present, d.failed, verr); err != nil {
		return s.missingFirst(ctx, r, key, org, err)
	}
	check, cond := writeCheck(ctx, r), conditionOf(ctx, r)
	if check == nil && cond == nil {
		return s.write(ctx, r, key, rec, present, org)
	}
	return s.Transaction(ctx, func(tx *Store) error {
		old, err := tx.getForUpdate(ctx, r, key, org)
		if err != nil {
			return err
		}
		if err := tx.precondition(ctx, r, key, org, cond, old); err != nil {
			return err
		}
		if check != nil {
			if err := r.runCheck(ctx, check, tx, old, rec); err != nil {
				return err
			}
		}
		if err := tx.write(ctx, r, key, rec, present, org); err != nil {
			return err
		}
		return tx.tag(ctx, r, key, org, cond, rec)
	})
}

// missingFirst returns ErrNotFound in place of err, a problem with the members of a write of
// the record with key, when no record has key within org: PUT or PATCH of a missing record
// is a 404 before any member is judged (api.md's error table), so a client learns first that
// its target is gone. It costs a lookup only on the error path.
func (s *Store) missingFirst(ctx context.Context, r *Resource, key []any, org string, err error) error {
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) == 0 {
		return err
	}
	// A stale If-Match is a 412 before the content is looked at (RFC 9110 §13.2.2). Nothing is
	// written either way, so the record is read without a lock.
	if c := conditionOf(ctx, r); c != nil {
		if xerr := s.precondition(ctx, r, key, org, c, nil); xerr != nil {
			return xerr
		}
	}
	found, xerr := s.exists(ctx, r, key, org)
	switch {
	case xerr != nil:
		return xerr
	case !found:
		return ErrNotFound
	}
	return err
}

// Patch applies the members the draft gives (a JSON merge patch, RFC 7396, once decoded) to
// the record with key. The read, the merge and the write are one transaction holding the row
// (see getForUpdate): concurrent patches of different members both take effect.
func (s *Store) Patch(ctx context.Context, r *Resource, key []any, d Draft, scope Scope) (err error) {
	defer wrap(&err, "patch", r.Name, key)
	org, err := writeOf(r, d, scope)
	if err != nil {
		return err
	}
	patch, present, verr := d.rec, d.given, d.problemsOfWrite()
	pinKey(r, patch, present, key, verr)
	// The members' problems need the stored record, which the transaction reads (a missing
	// record is a 404 and a stale If-Match a 412 first): a patch with problems writes nothing.
	return s.Transaction(ctx, func(tx *Store) error {
		rec, err := tx.getForUpdate(ctx, r, key, org)
		if err != nil {
			return err
		}
		cond := conditionOf(ctx, r)
		if err := tx.precondition(ctx, r, key, org, cond, rec); err != nil {
			return err
		}
		check := writeCheck(ctx, r)
		var old Record
		if check != nil {
			old = append(Record(nil), rec...)
		}
		all := make([]bool, len(r.Members))
		for _, f := range r.Fields {
			all[f.Index] = true
			if present[f.Index] {
				rec[f.Index] = patch[f.Index]
			}
		}
		claimScope(r, rec, all, org, verr)
		// Only the members the patch names are hashed: the others hold stored values.
		if err := prepare(r, rec, all, present, d.failed, verr); err != nil {
			return err
		}
		if check != nil {
			if err := r.runCheck(ctx, check, tx, old, rec); err != nil {
				return err
			}
		}
		if err := tx.write(ctx, r, key, rec, all, org); err != nil {
			return err
		}
		return tx.tag(ctx, r, key, org, cond, rec)
	})
}

// pinKey makes the path key win over the body, adding a body key that differs to verr.
func pinKey(r *Resource, rec Record, present []bool, key []any, verr *ValidationError) {
	for i, k := range r.Key {
		if present[k.Index] && rec[k.Index] != nil && rec[k.Index] != key[i] {
			verr.Add(k.Name, fmt.Sprintf("%s %v in the body differs from %v in the path", k.Name, rec[k.Index], key[i]))
		}
		rec[k.Index], present[k.Index] = key[i], true
	}
}

// write updates the stored non-key columns of the record with key within org: every one,
// except write-only members not given (present false), which keep their stored value.
func (s *Store) write(ctx context.Context, r *Resource, key []any, rec Record, present []bool, org string) error {
	set := columnsOf(r, rec)
	for _, k := range r.Key {
		delete(set, k.Column)
	}
	for _, f := range r.Fields {
		if f.WriteOnly && !present[f.Index] {
			delete(set, f.Column)
		}
	}
	tx := whereKey(s.scope(s.from(ctx, r), r, org), r, key).Updates(set)
	if err := tx.Error; err != nil {
		return translate(s, r, err)
	}
	if tx.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// SetMatching sets members of every record of r that the conditions of q match (its paging,
// projection and sort are ignored) to the values given, in one UPDATE, and returns how many
// records it changed. It is for the modules' bookkeeping, as DeleteMatching is: the values are
// the process's own, stored as given (no hook, write check or validate tag runs), and neither
// a key member nor a computed one may be set. Each value must be of its member's Go type (as
// for Draft.Set) and obey the member's rules as every write does (null, text, length, range:
// a *ValidationError naming the member, nothing written). scope limits it like a list.
func (s *Store) SetMatching(ctx context.Context, r *Resource, q Query, set map[*Field]any, scope Scope) (_ int64, err error) {
	defer wrap(&err, "set", r.Name, nil)
	if err := scope.check(); err != nil {
		return 0, err
	}
	cols := make(map[string]any, len(set))
	verr := &ValidationError{}
	for f, v := range set {
		if !f.Stored() || slices.Contains(r.Key, f) {
			return 0, fmt.Errorf("set %s: not a stored non-key field", f.Name)
		}
		v, err := f.goValue(v)
		if err != nil {
			return 0, fmt.Errorf("set %s: %w", f.Name, err)
		}
		switch p := f.valueProblem(v); {
		case v == nil && !f.Nullable:
			verr.Add(f.Name, f.Name+" cannot be null")
		case p != "":
			verr.Add(f.Name, f.Name+" "+p)
		}
		cols[f.Column] = storageValue(v)
	}
	if !verr.Empty() {
		return 0, verr
	}
	for _, c := range q.Conds {
		if !c.Field.Stored() {
			return 0, fmt.Errorf("where %s: not a stored field", c.Field.Name)
		}
	}
	tx := s.where(s.from(ctx, r), r, Query{Conds: q.Conds, org: scope.orgFor(r)}).Updates(cols)
	if tx.Error != nil {
		return 0, translate(s, r, tx.Error)
	}
	return tx.RowsAffected, nil
}
