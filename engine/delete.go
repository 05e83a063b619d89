package engine

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm/clause"
)

// Delete removes the record with key within scope, running the afterDelete hooks with the row
// as it was deleted (read under getForUpdate's lock) and removing its content
// (Descriptor.Content), all in the same transaction.
func (s *Store) Delete(ctx context.Context, r *Resource, key []any, scope Scope) (err error) {
	defer wrap(&err, "delete", r.Name, key)
	if err := scope.check(); err != nil {
		return err
	}
	org := scope.orgFor(r)
	check, cond := writeCheck(ctx, r), conditionOf(ctx, r)
	if cond != nil && len(cond.IfMatch) == 0 && len(cond.IfNoneMatch) == 0 {
		cond = nil
	}
	if len(r.afterDelete) == 0 && check == nil && cond == nil && r.Content == "" {
		return s.deleteRow(ctx, r, key, org)
	}
	return s.Transaction(ctx, func(tx *Store) error {
		rec, err := tx.getForUpdate(ctx, r, key, org)
		if err != nil {
			return err
		}
		if err := tx.precondition(ctx, r, key, org, cond, rec); err != nil {
			return err
		}
		if check != nil {
			if err := r.runCheck(ctx, check, tx, rec, nil); err != nil {
				return err
			}
		}
		if err := tx.deleteRow(ctx, r, key, org); err != nil {
			return err
		}
		for _, h := range r.afterDelete {
			if err := h(ctx, tx, r, rec); err != nil {
				return fmt.Errorf("hook: %w", err)
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
		return translate(s, r, err)
	}
	if tx.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteWhere removes every record of r whose member equals value (used by modules that
// replace a set of rows); it returns how many were removed.
func (s *Store) DeleteWhere(ctx context.Context, r *Resource, member string, value any) (_ int64, err error) {
	defer wrap(&err, "delete", r.Name+" where "+member, nil)
	f, ok := r.byName[member]
	if !ok || !f.Stored() {
		return 0, errors.New("no such field")
	}
	if r.Content != "" {
		return 0, errors.New("its content would stay; delete by key")
	}
	tx := s.from(ctx, r).Where(clause.Eq{Column: col(alias, f.Column), Value: storageValue(value)}).Delete(&map[string]any{})
	if tx.Error != nil {
		return 0, translate(s, r, tx.Error)
	}
	return tx.RowsAffected, nil
}

// IsNotFound reports whether err is an ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// DeleteMatching removes every record of r that the conditions of q match (its paging,
// projection and sort are ignored), with their content (Descriptor.Content) in the same
// transaction, and returns how many records were removed. It is for the modules'
// housekeeping (expired rows); scope limits it like a list.
func (s *Store) DeleteMatching(ctx context.Context, r *Resource, q Query, scope Scope) (_ int64, err error) {
	defer wrap(&err, "delete", r.Name, nil)
	if err := scope.check(); err != nil {
		return 0, err
	}
	for _, c := range q.Conds {
		if !c.Field.Stored() {
			return 0, fmt.Errorf("where %s: not a stored field", c.Field.Name)
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
		return 0, translate(s, r, tx.Error)
	}
	return tx.RowsAffected, nil
}
