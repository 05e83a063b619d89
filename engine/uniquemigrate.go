package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// maxDuplicatesShown bounds the records a refused migration names (see refuseDuplicates).
const maxDuplicatesShown = 20

// DuplicatesError is a migration's refusal to create the index of a unique constraint that
// the records of the partition already break: several records hold one value as the
// constraint compares them (for a constraint that folds case, values that differ only in
// case). Nothing of the migration is kept; the operator makes the values unique and starts
// again (docs/operations.md, "Values that a unique constraint refuses").
type DuplicatesError struct {
	Resource   *Resource
	Constraint Unique
	// Values is the number of values held by more than one record.
	Values int
	// Records are some of those records (at most maxDuplicatesShown), by value: the key's
	// members and the constraint's, "Member=value" each.
	Records []string
}

func (e *DuplicatesError) Error() string {
	s := "s are each"
	if e.Values == 1 {
		s = " is"
	}
	return fmt.Sprintf("%s (table %s): cannot create the unique index of %s: %d value%s held by more than one %s: %s; make each unique and start again (docs/operations.md, \"Values that a unique constraint refuses\")",
		e.Resource.Name, e.Resource.Table, e.Constraint.describe(), e.Values, s, e.Resource.Name, strings.Join(e.Records, "; "))
}

// refuseDuplicates returns a *DuplicatesError when records of r break u as its index would
// see them (its expressions, empty strings and missing values left out). It reads the whole
// table, and runs only when a migration is about to create the index: CREATE UNIQUE INDEX
// would fail on the first pair it meets with a message naming one value, in the database's
// words.
func (s *Store) refuseDuplicates(ctx context.Context, r *Resource, u Unique) error {
	db := s.db.WithContext(ctx)
	exprs := make([]string, len(u.Fields))
	var where []string
	for i, f := range u.Fields {
		exprs[i] = s.uniqueExpr(alias, u, f)
		switch {
		case skipsEmpty(f):
			where = append(where, alias+"."+quote(f.Column)+" <> ''")
		case !f.Key:
			// A missing value (NULL) equals none in a unique index, on both stores: records
			// that omit it never break the constraint, and GROUP BY would count them as one.
			where = append(where, alias+"."+quote(f.Column)+" IS NOT NULL")
		}
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	group := strings.Join(exprs, ", ")
	dups := fmt.Sprintf("SELECT %s FROM %s AS %s%s GROUP BY %s HAVING COUNT(*) > 1", group, s.Table(r), alias, cond, group)
	var n int
	if err := db.Raw("SELECT COUNT(*) FROM (" + dups + ") AS d").Scan(&n).Error; err != nil {
		return fmt.Errorf("%s: look for values that %s refuses: %w", r.Table, u.describe(), err)
	}
	if n == 0 {
		return nil
	}
	shown := append(append([]*Field{}, r.Key...), u.Fields...)
	cols := make([]string, len(shown))
	for i, f := range shown {
		cols[i] = alias + "." + quote(f.Column)
	}
	in := group
	if len(exprs) > 1 {
		in = "(" + group + ")"
	}
	keyCols := make([]string, len(r.Key))
	for i, k := range r.Key {
		keyCols[i] = alias + "." + quote(k.Column)
	}
	q := fmt.Sprintf("SELECT %s FROM %s AS %s WHERE %s IN (%s)%s ORDER BY %s, %s LIMIT %d",
		strings.Join(cols, ", "), s.Table(r), alias, in, dups, strings.ReplaceAll(cond, " WHERE ", " AND "), group, strings.Join(keyCols, ", "), maxDuplicatesShown)
	rows, err := db.Raw(q).Rows()
	if err != nil {
		return fmt.Errorf("%s: list the values that %s refuses: %w", r.Table, u.describe(), err)
	}
	defer rows.Close()
	e := &DuplicatesError{Resource: r, Constraint: u, Values: n}
	vals := make([]sql.NullString, len(shown))
	dest := make([]any, len(shown))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("%s: list the values that %s refuses: %w", r.Table, u.describe(), err)
		}
		parts := make([]string, len(shown))
		for i, f := range shown {
			parts[i] = fmt.Sprintf("%s=%q", f.Name, storedText(f, vals[i].String))
		}
		e.Records = append(e.Records, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: list the values that %s refuses: %w", r.Table, u.describe(), err)
	}
	return e
}

// dropIndex drops the index name of the partition.
func (s *Store) dropIndex(ctx context.Context, name string) error {
	if err := s.db.WithContext(ctx).Exec("DROP INDEX IF EXISTS " + s.qualify(name)).Error; err != nil {
		return fmt.Errorf("drop index %s: %w", name, err)
	}
	return nil
}
