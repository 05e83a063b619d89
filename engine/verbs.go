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

// Transaction runs fn with a store bound to one database transaction.
func (s *Store) Transaction(ctx context.Context, fn func(tx *Store) error) error {
	return s.db.WithContext(ctx).Transaction(func(db *gorm.DB) error { return fn(s.withDB(db)) })
}

// Get returns the record with key, projected to fields (nil: the full record), within org.
func (s *Store) Get(ctx context.Context, r *Resource, key []any, fields []*Field, org string) (Record, error) {
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

// Exists reports whether the record with key exists within org.
func (s *Store) Exists(ctx context.Context, r *Resource, key []any, org string) (bool, error) {
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
	// A key lookup is one index probe: it runs to its end rather than have database/sql start
	// a goroutine per query to watch the request for cancellation.
	return s.query(context.WithoutCancel(ctx), shape(op, r, Query{Fields: fields, Org: org}), vals, build)
}

// Count returns how many records match q.
func (s *Store) Count(ctx context.Context, r *Resource, q Query) (int64, error) {
	q.Fields, q.Sort, q.Take, q.Page = nil, nil, 0, 0
	n, err := s.count(ctx, shape("count", r, q), condValues(q), func(v []any) *gorm.DB {
		return s.where(s.from(ctx, r), r, withValues(q, v))
	})
	if err != nil {
		return 0, fmt.Errorf("engine: count %s: %w", r.Name, translate(r, err))
	}
	return n, nil
}

// List returns one page of q and the total number of matches. A first page shorter than Take
// is the whole result, so the count statement is skipped.
func (s *Store) List(ctx context.Context, r *Resource, q Query) ([]Record, int64, error) {
	recs := make([]Record, 0, min(q.Take, 64))
	err := s.Stream(ctx, r, q, func(rec Record) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if q.Page == 1 && len(recs) < q.Take {
		return recs, int64(len(recs)), nil
	}
	total, err := s.Count(ctx, r, q)
	return recs, total, err
}

// Stream calls fn for every record of q's page (every match when q.Take is 0), reading rows
// one by one so that memory stays flat whatever the size.
func (s *Store) Stream(ctx context.Context, r *Resource, q Query, fn func(Record) error) error {
	rows, err := s.query(ctx, shape("list", r, q), condValues(q), func(v []any) *gorm.DB {
		return s.listQuery(ctx, r, withValues(q, v))
	})
	if err != nil {
		return fmt.Errorf("engine: list %s: %w", r.Name, translate(r, err))
	}
	defer rows.Close()
	sc := newScanner(r, q.Fields)
	for rows.Next() {
		rec, err := sc.scan(rows)
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("engine: list %s: %w", r.Name, translate(r, err))
	}
	return nil
}

// Create decodes a body into a new record, fills what it omits, and stores it. A scoped
// record outside the caller's organization (org non-empty) is refused; an omitted
// organization becomes the caller's.
func (s *Store) Create(ctx context.Context, r *Resource, body []byte, org string) (Record, error) {
	rec, present, err := r.DecodeBody(body)
	if err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", r.Name, err)
	}
	return s.Insert(ctx, r, rec, present, org)
}

// Insert stores a decoded record (see Create); present says which members were given.
func (s *Store) Insert(ctx context.Context, r *Resource, rec Record, present []bool, org string) (Record, error) {
	if err := s.prepareNew(r, rec, present, org); err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", r.Name, err)
	}
	if err := s.insertRow(ctx, r, rec); err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", r.Name, translate(r, err))
	}
	if len(r.Output) == len(r.Fields) {
		return rec, nil
	}
	return s.Get(ctx, r, keyOf(r, rec), nil, "")
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
	return prepare(r, rec, present)
}

// claimScope puts an omitted organization of a directly scoped record to org and refuses another one.
func claimScope(r *Resource, rec Record, present []bool, org string) error {
	if org == "" {
		return nil
	}
	for _, sc := range r.Scope {
		if sc.Via != nil {
			continue
		}
		i := sc.Field.Index
		if !present[i] || rec[i] == nil || rec[i] == zeroValue(TypeUUID) {
			rec[i], present[i] = org, true
		} else if rec[i] != org {
			return InvalidMember(sc.Field.Name, "%s must be your organization (%s)", sc.Field.Name, org)
		}
	}
	return nil
}

// prepare completes and validates a record, then runs the beforeWrite hooks.
func prepare(r *Resource, rec Record, present []bool) error {
	if err := r.complete(rec, present); err != nil {
		return err
	}
	for _, h := range r.beforeWrite {
		if err := h(r, rec); err != nil {
			return err
		}
	}
	return nil
}

func keyOf(r *Resource, rec Record) []any {
	key := make([]any, len(r.Key))
	for i, k := range r.Key {
		key[i] = rec[k.Index]
	}
	return key
}

// Update replaces the record with key by the body: omitted members become null or zero
// (decisions §4). A body key that differs from the path is a 400.
func (s *Store) Update(ctx context.Context, r *Resource, key []any, body []byte, org string) error {
	rec, present, err := r.DecodeBody(body)
	if err != nil {
		return fmt.Errorf("engine: update %s: %w", r.Name, err)
	}
	if err := pinKey(r, rec, present, key); err != nil {
		return fmt.Errorf("engine: update %s: %w", r.Name, err)
	}
	if err := claimScope(r, rec, present, org); err != nil {
		return fmt.Errorf("engine: update %s: %w", r.Name, err)
	}
	if err := prepare(r, rec, present); err != nil {
		return fmt.Errorf("engine: update %s: %w", r.Name, err)
	}
	return s.write(ctx, r, key, rec, org)
}

// Patch applies a JSON merge patch (RFC 7396) to the record with key.
func (s *Store) Patch(ctx context.Context, r *Resource, key []any, body []byte, org string) error {
	patch, present, err := r.DecodeBody(body)
	if err != nil {
		return fmt.Errorf("engine: patch %s: %w", r.Name, err)
	}
	if err := pinKey(r, patch, present, key); err != nil {
		return fmt.Errorf("engine: patch %s: %w", r.Name, err)
	}
	return s.Transaction(ctx, func(tx *Store) error {
		rec, err := tx.Get(ctx, r, key, r.Fields, org)
		if err != nil {
			return fmt.Errorf("engine: patch %s: %w", r.Name, err)
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
		if err := prepare(r, rec, all); err != nil {
			return fmt.Errorf("engine: patch %s: %w", r.Name, err)
		}
		return tx.write(ctx, r, key, rec, org)
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

// write updates every stored non-key column of the record with key within org.
func (s *Store) write(ctx context.Context, r *Resource, key []any, rec Record, org string) error {
	set := columnsOf(r, rec)
	for _, k := range r.Key {
		delete(set, k.Column)
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

// Delete removes the record with key within org, running the afterDelete hooks in the same
// transaction.
func (s *Store) Delete(ctx context.Context, r *Resource, key []any, org string) error {
	if len(r.afterDelete) == 0 {
		return s.deleteRow(ctx, r, key, org)
	}
	return s.Transaction(ctx, func(tx *Store) error {
		rec, err := tx.Get(ctx, r, key, r.Fields, org)
		if err != nil {
			return fmt.Errorf("engine: delete %s: %w", r.Name, err)
		}
		if err := tx.deleteRow(ctx, r, key, org); err != nil {
			return err
		}
		for _, h := range r.afterDelete {
			if err := h(ctx, tx, r, rec); err != nil {
				return fmt.Errorf("engine: delete %s %v: hook: %w", r.Name, key, err)
			}
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
	tx := s.from(ctx, r).Where(clause.Eq{Column: col(alias, f.Column), Value: storageValue(value)}).Delete(&map[string]any{})
	if tx.Error != nil {
		return 0, fmt.Errorf("engine: delete %s where %s: %w", r.Name, member, translate(r, tx.Error))
	}
	return tx.RowsAffected, nil
}

// IsNotFound reports whether err is an ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
