package engine

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// withDB returns a copy of the store bound to a transaction.
func (s *Store) withDB(db *gorm.DB) *Store {
	c := *s
	c.db, c.pool = db, nil // a transaction runs everything on its own connection
	return &c
}

// Transaction runs fn with a store bound to one database transaction. Like every statement,
// its BEGIN, COMMIT and ROLLBACK do not see ctx's cancellation on PostgreSQL (see detach); a
// failure of theirs is translated into its category.
func (s *Store) Transaction(ctx context.Context, fn func(tx *Store) error) error {
	return translate(nil, s.transaction(s.detach(ctx), fn))
}

// transaction runs fn in a transaction on ctx as it is: start-up's, which a signal cancels.
func (s *Store) transaction(ctx context.Context, fn func(tx *Store) error) error {
	return s.db.WithContext(ctx).Transaction(func(db *gorm.DB) error { return fn(s.withDB(db)) })
}

// Get returns the record with key, projected to fields (nil: the full record), within scope.
func (s *Store) Get(ctx context.Context, r *Resource, key []any, fields []*Field, scope Scope) (Record, error) {
	if err := scope.check(); err != nil {
		return nil, fmt.Errorf("engine: get %s %v: %w", r.Name, key, err)
	}
	return s.get(ctx, r, key, fields, scope.orgFor(r))
}

func (s *Store) get(ctx context.Context, r *Resource, key []any, fields []*Field, org string) (Record, error) {
	if fields == nil {
		fields = r.Output
	}
	rows, err := s.byKey(ctx, "get", r, key, fields, org)
	if err != nil {
		return nil, fmt.Errorf("engine: get %s %v: %w", r.Name, key, translate(r, err))
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("engine: get %s %v: %w", r.Name, key, translate(r, err))
		}
		return nil, fmt.Errorf("engine: get %s %v: %w", r.Name, key, ErrNotFound)
	}
	return newScanner(r, fields).scan(rows)
}

// Exists reports whether the record with key exists within scope.
func (s *Store) Exists(ctx context.Context, r *Resource, key []any, scope Scope) (bool, error) {
	if err := scope.check(); err != nil {
		return false, fmt.Errorf("engine: exists %s %v: %w", r.Name, key, err)
	}
	return s.exists(ctx, r, key, scope.orgFor(r))
}

func (s *Store) exists(ctx context.Context, r *Resource, key []any, org string) (bool, error) {
	rows, err := s.byKey(ctx, "exists", r, key, nil, org)
	if err != nil {
		return false, fmt.Errorf("engine: exists %s %v: %w", r.Name, key, translate(r, err))
	}
	defer rows.Close()
	found := rows.Next()
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("engine: exists %s %v: %w", r.Name, key, translate(r, err))
	}
	return found, nil
}

// byKey selects fields (nil: the constant 1) of the record with key within org.
func (s *Store) byKey(ctx context.Context, op string, r *Resource, key []any, fields []*Field, org string) (rowSet, error) {
	vals := make([]any, len(key), len(key)+1)
	copy(vals, key)
	if org != "" {
		vals = append(vals, org)
	}
	build := func(v []any) *gorm.DB {
		sel := "1"
		if fields != nil {
			sel = s.selectExpr(r, fields)
		}
		o := ""
		if org != "" {
			o, _ = v[len(key)].(string)
		}
		return whereKey(s.scope(s.from(ctx, r).Select(sel), r, o), r, v[:len(key)]).Limit(1)
	}
	// A key lookup is one index probe: it runs to its end (within the store's timeout on
	// PostgreSQL) rather than have database/sql and the SQLite driver start two goroutines per
	// query to watch the request for cancellation.
	return s.query(context.WithoutCancel(ctx), shape(op, r, Query{Fields: fields, org: org}), vals, build)
}

// getForUpdate reads the stored members of the record with key within org for a
// read-merge-write in a transaction (s is bound to it), so that no other writer changes the
// row between the read and the write. On PostgreSQL it locks the row (SELECT … FOR UPDATE OF
// t) until the transaction ends; on SQLite every transaction begins IMMEDIATE (see Open) and so
// already holds the database's write lock when it reads.
func (s *Store) getForUpdate(ctx context.Context, r *Resource, key []any, org string) (Record, error) {
	vals := make([]any, len(key), len(key)+1)
	copy(vals, key)
	if org != "" {
		vals = append(vals, org)
	}
	rows, err := s.query(ctx, shape("lock", r, Query{Fields: r.Fields, org: org}), vals, func(v []any) *gorm.DB {
		o := ""
		if org != "" {
			o, _ = v[len(key)].(string)
		}
		tx := whereKey(s.scope(s.from(ctx, r).Select(s.selectExpr(r, r.Fields)), r, o), r, v[:len(key)]).Limit(1)
		if s.dialect == Postgres {
			tx = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate, Table: clause.Table{Name: alias}})
		}
		return tx
	})
	if err != nil {
		return nil, fmt.Errorf("engine: lock %s %v: %w", r.Name, key, translate(r, err))
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("engine: lock %s %v: %w", r.Name, key, translate(r, err))
		}
		return nil, fmt.Errorf("engine: lock %s %v: %w", r.Name, key, ErrNotFound)
	}
	return newScanner(r, r.Fields).scan(rows)
}

// Count returns how many records match q within scope.
func (s *Store) Count(ctx context.Context, r *Resource, q Query, scope Scope) (int64, error) {
	if err := scope.check(); err != nil {
		return 0, fmt.Errorf("engine: count %s: %w", r.Name, err)
	}
	q.org = scope.orgFor(r)
	return s.count(ctx, r, q)
}

func (s *Store) count(ctx context.Context, r *Resource, q Query) (int64, error) {
	q.Fields, q.Sort, q.Take, q.Page = nil, nil, 0, 0
	n, err := s.countRows(ctx, shape("count", r, q), condValues(q), func(v []any) *gorm.DB {
		return s.where(s.from(ctx, r), r, withValues(q, v))
	})
	if err != nil {
		return 0, fmt.Errorf("engine: count %s: %w", r.Name, translate(r, err))
	}
	return n, nil
}

// List returns one page of q within scope and the total number of matches. A first page
// shorter than Take is the whole result, so the count statement is skipped.
func (s *Store) List(ctx context.Context, r *Resource, q Query, scope Scope) ([]Record, int64, error) {
	if err := scope.check(); err != nil {
		return nil, 0, fmt.Errorf("engine: list %s: %w", r.Name, err)
	}
	q.org = scope.orgFor(r)
	recs := make([]Record, 0, min(q.Take, 64))
	err := s.stream(ctx, r, q, func(rec Record) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if q.Page == 1 && len(recs) < q.Take {
		return recs, int64(len(recs)), nil
	}
	total, err := s.count(ctx, r, q)
	return recs, total, err
}

// Stream calls fn for every record of q's page within scope (every match when q.Take is 0),
// reading rows one by one so that memory stays flat whatever the size.
//
// A page (q.Take > 0) is one statement within the store's timeout; a stream of every match
// must instead receive each row within it (see progress), so that an export's time can grow
// with the table.
func (s *Store) Stream(ctx context.Context, r *Resource, q Query, scope Scope, fn func(Record) error) error {
	if err := scope.check(); err != nil {
		return fmt.Errorf("engine: list %s: %w", r.Name, err)
	}
	q.org = scope.orgFor(r)
	return s.stream(ctx, r, q, fn)
}

func (s *Store) stream(ctx context.Context, r *Resource, q Query, fn func(Record) error) error {
	var prog *progress
	if q.Take == 0 {
		var stop func()
		ctx, prog, stop = s.streamProgress(ctx)
		defer stop()
	}
	rows, err := s.query(ctx, shape("list", r, q), condValues(q), func(v []any) *gorm.DB {
		return s.listQuery(ctx, r, withValues(q, v))
	})
	prog.got()
	if err != nil {
		return fmt.Errorf("engine: list %s: %w", r.Name, translate(r, prog.check(err)))
	}
	defer rows.Close()
	sc := newScanner(r, q.Fields)
	for {
		prog.wait()
		more := rows.Next()
		prog.got()
		if !more {
			break
		}
		rec, err := sc.scan(rows)
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("engine: list %s: %w", r.Name, translate(r, prog.check(err)))
	}
	return nil
}

// Create fills what the draft omits and stores it as a new record of r. Within one
// organization's scope, a scoped record of another organization is refused and an omitted
// organization becomes the scope's. The draft is completed in place.
func (s *Store) Create(ctx context.Context, r *Resource, d Draft, scope Scope) (Record, error) {
	org, err := writeOf(r, d, scope)
	if err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", r.Name, err)
	}
	return s.insert(ctx, r, d.rec, d.given, org)
}

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

func (s *Store) insert(ctx context.Context, r *Resource, rec Record, present []bool, org string) (Record, error) {
	if err := s.prepareNew(r, rec, present, org); err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", r.Name, err)
	}
	if check := writeCheck(ctx, r); check != nil {
		if err := check(ctx, s, r, nil, rec); err != nil {
			return nil, err
		}
	}
	if err := s.insertRow(ctx, r, rec); err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", r.Name, translate(r, err))
	}
	if len(r.Output) == len(r.Fields) {
		return rec, nil
	}
	return s.get(ctx, r, keyOf(r, rec), nil, "")
}

// prepareNew gives a new record its key, organization, defaults and derived members, and validates it.
func (s *Store) prepareNew(r *Resource, rec Record, present []bool, org string) error {
	if len(r.Key) == 1 && r.Key[0].Type == TypeUUID && (!present[r.Key[0].Index] || rec[r.Key[0].Index] == nil) {
		rec[r.Key[0].Index] = NewID()
		present[r.Key[0].Index] = true
	}
	if err := claimScope(r, rec, present, org); err != nil {
		return err
	}
	return prepare(r, rec, present, present)
}

// claimScope puts an omitted organization (null, or the nil UUID where the member is not
// required) of a directly scoped record to org and refuses another one. The nil UUID in a
// required organization is left for complete to refuse.
func claimScope(r *Resource, rec Record, present []bool, org string) error {
	if org == "" {
		return nil
	}
	for _, sc := range r.Scope {
		if sc.Via != nil {
			continue
		}
		i := sc.Field.Index
		switch {
		case rec[i] == nilUUID && sc.Field.Required:
		case !present[i] || rec[i] == nil || rec[i] == nilUUID:
			rec[i], present[i] = org, true
		case rec[i] != org:
			return InvalidMember(sc.Field.Name, "%s must be your organization (%s)", sc.Field.Name, org)
		}
	}
	return nil
}

// prepare completes and validates a record, runs the beforeWrite hooks, and hashes the
// hashed members that the client gave in this write (given).
func prepare(r *Resource, rec Record, present, given []bool) error {
	if err := r.complete(rec, present); err != nil {
		return err
	}
	for _, h := range r.beforeWrite {
		if err := h(r, rec); err != nil {
			return err
		}
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

// Update replaces the record with key by the draft: omitted members become null or zero
// (decisions §4), except write-only members, which keep their stored value (a client cannot
// read them to send them back). A draft key that differs from the path is a 400. A missing
// record is an ErrNotFound whatever the draft's members say (see MissingFirst). Without a
// write check it reads nothing stored to write (the beforeWrite hooks derive members from the
// draft alone), so its one UPDATE statement is atomic.
func (s *Store) Update(ctx context.Context, r *Resource, key []any, d Draft, scope Scope) error {
	org, err := writeOf(r, d, scope)
	if err != nil {
		return fmt.Errorf("engine: update %s: %w", r.Name, err)
	}
	rec, present := d.rec, d.given
	err = pinKey(r, rec, present, key)
	if err == nil {
		err = claimScope(r, rec, present, org)
	}
	if err == nil {
		err = prepare(r, rec, present, present)
	}
	if err != nil {
		return fmt.Errorf("engine: update %s: %w", r.Name, s.missingFirst(ctx, r, key, org, err))
	}
	check := writeCheck(ctx, r)
	if check == nil {
		return s.write(ctx, r, key, rec, present, org)
	}
	return s.Transaction(ctx, func(tx *Store) error {
		old, err := tx.get(ctx, r, key, r.Fields, org)
		if err != nil {
			return fmt.Errorf("engine: update %s: %w", r.Name, err)
		}
		if err := check(ctx, tx, r, old, rec); err != nil {
			return err
		}
		return tx.write(ctx, r, key, rec, present, org)
	})
}

// MissingFirst returns ErrNotFound in place of err, a problem with the members of a write of
// the record with key, when no record has key within scope: PUT or PATCH of a missing record
// is a 404 before any member is judged (api.md's error table), so a client learns first that
// its target is gone. An edge that fails to decode a body into a draft passes its error
// through here; a body that is not a JSON object at all stays a 400. It costs a lookup only
// on the error path.
func (s *Store) MissingFirst(ctx context.Context, r *Resource, key []any, scope Scope, err error) error {
	if xerr := scope.check(); xerr != nil {
		return xerr
	}
	return s.missingFirst(ctx, r, key, scope.orgFor(r), err)
}

func (s *Store) missingFirst(ctx context.Context, r *Resource, key []any, org string, err error) error {
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) == 0 {
		return err
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
func (s *Store) Patch(ctx context.Context, r *Resource, key []any, d Draft, scope Scope) error {
	org, err := writeOf(r, d, scope)
	if err != nil {
		return fmt.Errorf("engine: patch %s: %w", r.Name, err)
	}
	patch, present := d.rec, d.given
	if err := pinKey(r, patch, present, key); err != nil {
		return fmt.Errorf("engine: patch %s: %w", r.Name, s.missingFirst(ctx, r, key, org, err))
	}
	return s.Transaction(ctx, func(tx *Store) error {
		rec, err := tx.getForUpdate(ctx, r, key, org)
		if err != nil {
			return fmt.Errorf("engine: patch %s: %w", r.Name, err)
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
		if err := claimScope(r, rec, all, org); err != nil {
			return fmt.Errorf("engine: patch %s: %w", r.Name, err)
		}
		// Only the members the patch names are hashed: the others hold stored values.
		if err := prepare(r, rec, all, present); err != nil {
			return fmt.Errorf("engine: patch %s: %w", r.Name, err)
		}
		if check != nil {
			if err := check(ctx, tx, r, old, rec); err != nil {
				return err
			}
		}
		return tx.write(ctx, r, key, rec, all, org)
	})
}

// pinKey makes the path key win over the body, refusing a body key that differs.
func pinKey(r *Resource, rec Record, present []bool, key []any) error {
	for i, k := range r.Key {
		if present[k.Index] && rec[k.Index] != nil && rec[k.Index] != key[i] {
			return InvalidMember(k.Name, "%s %v in the body differs from %v in the path", k.Name, rec[k.Index], key[i])
		}
		rec[k.Index], present[k.Index] = key[i], true
	}
	return nil
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
		return fmt.Errorf("engine: update %s %v: %w", r.Name, key, translate(r, err))
	}
	if tx.RowsAffected == 0 {
		return fmt.Errorf("engine: update %s %v: %w", r.Name, key, ErrNotFound)
	}
	return nil
}

// Delete removes the record with key within scope, running the afterDelete hooks with the row
// as it was deleted (read under getForUpdate's lock) and removing its content
// (Descriptor.Content), all in the same transaction.
func (s *Store) Delete(ctx context.Context, r *Resource, key []any, scope Scope) error {
	if err := scope.check(); err != nil {
		return fmt.Errorf("engine: delete %s %v: %w", r.Name, key, err)
	}
	org := scope.orgFor(r)
	check := writeCheck(ctx, r)
	if len(r.afterDelete) == 0 && check == nil && r.Content == "" {
		return s.deleteRow(ctx, r, key, org)
	}
	return s.Transaction(ctx, func(tx *Store) error {
		rec, err := tx.getForUpdate(ctx, r, key, org)
		if err != nil {
			return fmt.Errorf("engine: delete %s: %w", r.Name, err)
		}
		if check != nil {
			if err := check(ctx, tx, r, rec, nil); err != nil {
				return err
			}
		}
		if err := tx.deleteRow(ctx, r, key, org); err != nil {
			return err
		}
		for _, h := range r.afterDelete {
			if err := h(ctx, tx, r, rec); err != nil {
				return fmt.Errorf("engine: delete %s %v: hook: %w", r.Name, key, err)
			}
		}
		if r.Content != "" {
			return tx.dropContent(ctx, r, key)
		}
		return nil
	})
}

func (s *Store) deleteRow(ctx context.Context, r *Resource, key []any, org string) error {
	tx := whereKey(s.scope(s.from(ctx, r), r, org), r, key).Delete(&map[string]any{})
	if err := tx.Error; err != nil {
		return fmt.Errorf("engine: delete %s %v: %w", r.Name, key, translate(r, err))
	}
	if tx.RowsAffected == 0 {
		return fmt.Errorf("engine: delete %s %v: %w", r.Name, key, ErrNotFound)
	}
	return nil
}

// DeleteWhere removes every record of r whose member equals value (used by modules that
// replace a set of rows); it returns how many were removed.
func (s *Store) DeleteWhere(ctx context.Context, r *Resource, member string, value any) (int64, error) {
	f, ok := r.byName[member]
	if !ok || !f.Stored() {
		return 0, fmt.Errorf("engine: delete %s where %s: no such field", r.Name, member)
	}
	if r.Content != "" {
		return 0, fmt.Errorf("engine: delete %s where %s: its content would stay; delete by key", r.Name, member)
	}
	tx := s.from(ctx, r).Where(clause.Eq{Column: col(alias, f.Column), Value: storageValue(value)}).Delete(&map[string]any{})
	if tx.Error != nil {
		return 0, fmt.Errorf("engine: delete %s where %s: %w", r.Name, member, translate(r, tx.Error))
	}
	return tx.RowsAffected, nil
}

// IsNotFound reports whether err is an ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// DeleteMatching removes every record of r that the conditions of q match (its paging,
// projection and sort are ignored), with their content (Descriptor.Content) in the same
// transaction, and returns how many records were removed. It is for the modules'
// housekeeping (expired rows); scope limits it like a list.
func (s *Store) DeleteMatching(ctx context.Context, r *Resource, q Query, scope Scope) (int64, error) {
	if err := scope.check(); err != nil {
		return 0, fmt.Errorf("engine: delete %s: %w", r.Name, err)
	}
	for _, c := range q.Conds {
		if !c.Field.Stored() {
			return 0, fmt.Errorf("engine: delete %s where %s: not a stored field", r.Name, c.Field.Name)
		}
	}
	q = Query{Conds: q.Conds, org: scope.orgFor(r)}
	if r.Content != "" {
		var n int64
		err := s.Transaction(ctx, func(tx *Store) error {
			if err := tx.dropContentMatching(ctx, r, q); err != nil {
				return err
			}
			var err error
			n, err = tx.deleteMatching(ctx, r, q)
			return err
		})
		return n, err
	}
	return s.deleteMatching(ctx, r, q)
}

func (s *Store) deleteMatching(ctx context.Context, r *Resource, q Query) (int64, error) {
	tx := s.where(s.from(ctx, r), r, q).Delete(&map[string]any{})
	if tx.Error != nil {
		return 0, fmt.Errorf("engine: delete %s: %w", r.Name, translate(r, tx.Error))
	}
	return tx.RowsAffected, nil
}
