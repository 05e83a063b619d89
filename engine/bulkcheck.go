package engine

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// existingBatch bounds the values of one IN (…) when checking which values exist.
const existingBatch = 500

// records returns the records of drafts of r (nil for the zero Draft).
func records(r *Resource, drafts []Draft) ([]Record, error) {
	recs := make([]Record, len(drafts))
	for i, d := range drafts {
		if d.r == nil {
			continue
		}
		if err := d.of(r); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		recs[i] = d.rec
	}
	return recs, nil
}

// CheckAll prepares the records of a bulk insert as InsertAll does (keys, defaults, the
// caller's organization, hooks) and returns every problem it finds, without writing:
//   - each record's member problems (required, null, validate rules, organization);
//   - a key or unique constraint that two records of the batch share (null and, for unique
//     constraints, empty strings never collide, as in the database);
//   - a key or single-field unique value that the partition already holds;
//   - a value of a member that declares `references` naming no record of the referenced
//     resource, in the partition or in the batch itself.
//
// A zero drafts[i] is a row the caller could not decode: it is skipped, its index kept. The
// drafts are completed in place. The result is nil when there is no problem; problems are
// ordered by row.
func (s *Store) CheckAll(ctx context.Context, r *Resource, drafts []Draft, scope Scope) (*BulkError, error) {
	if err := scope.check(); err != nil {
		return nil, err
	}
	recs, err := records(r, drafts)
	if err != nil {
		return nil, err
	}
	org := scope.orgFor(r)
	bulk := &BulkError{}
	ok := make([]bool, len(recs))
	for i, rec := range recs {
		if rec == nil {
			continue
		}
		if err := s.prepareNew(r, rec, drafts[i].given, org); err != nil {
			bulk.add(i, err)
			continue
		}
		ok[i] = true
	}
	sets := append([][]*Field{r.Key}, r.Unique...)
	for si, set := range sets {
		first := map[string]int{}
		for i, rec := range recs {
			if !ok[i] {
				continue
			}
			k, skip := tuple(set, rec, si > 0)
			if skip {
				continue
			}
			if j, dup := first[k]; dup {
				bulk.Rows = append(bulk.Rows, RowError{Row: i, Member: set[0].Name,
					Msg: fmt.Sprintf("%s %s repeats row %d", fieldNames(set), k, j)})
				continue
			}
			first[k] = i
		}
		check := s.checkExistingSet
		if len(set) == 1 {
			check = func(ctx context.Context, r *Resource, set []*Field, recs []Record, ok []bool, unique bool, bulk *BulkError) error {
				return s.checkExisting(ctx, r, set[0], recs, ok, unique, bulk)
			}
		}
		if err := check(ctx, r, set, recs, ok, si > 0, bulk); err != nil {
			return nil, err
		}
	}
	for _, f := range r.Fields {
		if f.References != nil {
			if err := s.checkReferences(ctx, r, f, recs, ok, bulk); err != nil {
				return nil, err
			}
		}
	}
	if len(bulk.Rows) == 0 {
		return nil, nil
	}
	sort.SliceStable(bulk.Rows, func(i, j int) bool { return bulk.Rows[i].Row < bulk.Rows[j].Row })
	return bulk, nil
}

// tuple renders the values of set in rec as one comparable string; skip is true when a value
// is null, or an empty string of a unique constraint (its index skips empty strings).
func tuple(set []*Field, rec Record, unique bool) (string, bool) {
	parts := make([]string, len(set))
	for i, f := range set {
		v := rec[f.Index]
		if v == nil || (unique && v == "") {
			return "", true
		}
		parts[i] = text(v)
	}
	return strings.Join(parts, ", "), false
}

func text(v any) string { return fmt.Sprint(storageValue(v)) }

func fieldNames(set []*Field) string {
	names := make([]string, len(set))
	for i, f := range set {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// checkExisting reports the records whose value of f (a key or single-field unique
// constraint of r) the partition already holds.
func (s *Store) checkExisting(ctx context.Context, r *Resource, f *Field, recs []Record, ok []bool, unique bool, bulk *BulkError) error {
	var values []any
	for i, rec := range recs {
		if ok[i] && rec[f.Index] != nil && !(unique && rec[f.Index] == "") {
			values = append(values, rec[f.Index])
		}
	}
	have, err := s.existing(ctx, r, f, values, unique)
	if err != nil {
		return err
	}
	for i, rec := range recs {
		if ok[i] && rec[f.Index] != nil && have[text(rec[f.Index])] {
			bulk.Rows = append(bulk.Rows, RowError{Row: i, Member: f.Name,
				Msg: fmt.Sprintf("another %s already has %s %s", r.Name, f.Name, text(rec[f.Index]))})
		}
	}
	return nil
}

// checkExistingSet reports the records whose values of set (a key or unique constraint of r
// of several fields) the partition already holds, as checkExisting does for one field.
func (s *Store) checkExistingSet(ctx context.Context, r *Resource, set []*Field, recs []Record, ok []bool, unique bool, bulk *BulkError) error {
	rowsOf := map[string][]int{}
	var tuples [][]any
	for i, rec := range recs {
		if !ok[i] {
			continue
		}
		k, skip := tuple(set, rec, unique)
		if skip {
			continue
		}
		if _, seen := rowsOf[k]; !seen {
			vals := make([]any, len(set))
			for j, f := range set {
				vals[j] = storageValue(rec[f.Index])
			}
			tuples = append(tuples, vals)
		}
		rowsOf[k] = append(rowsOf[k], i)
	}
	have, err := s.existingTuples(ctx, r, set, tuples, unique)
	if err != nil {
		return err
	}
	for k, rows := range rowsOf {
		if !have[k] {
			continue
		}
		for _, i := range rows {
			bulk.Rows = append(bulk.Rows, RowError{Row: i, Member: set[0].Name,
				Msg: fmt.Sprintf("another %s already has %s %s", r.Name, fieldNames(set), k)})
		}
	}
	return nil
}

// existingTuples returns which of tuples (values of r's stored fields set) the partition
// holds, rendered as tuple renders them. The condition is an OR of equalities on every field,
// which both stores answer from the set's index (a row-value IN list is not SQLite's). The
// index of a unique constraint leaves out empty strings (see DDL): each arm repeats that
// condition, without which neither store may use the partial index, and each arm read every
// row of its first member's value instead (seeding 100,000 people slowed from 2 minutes to
// over 20).
func (s *Store) existingTuples(ctx context.Context, r *Resource, set []*Field, tuples [][]any, unique bool) (map[string]bool, error) {
	have := map[string]bool{}
	per := max(1, existingBatch/len(set))
	for start := 0; start < len(tuples); start += per {
		part := tuples[start:min(start+per, len(tuples))]
		rows, err := s.tuplesQuery(ctx, r, set, part, unique).Rows()
		if err != nil {
			return nil, fmt.Errorf("engine: check %s %s: %w", r.Name, fieldNames(set), translate(r, err))
		}
		vals := make([]sql.NullString, len(set))
		dest := make([]any, len(set))
		for i := range vals {
			dest[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("engine: check %s %s: %w", r.Name, fieldNames(set), err)
			}
			parts := make([]string, len(set))
			for i, f := range set {
				parts[i] = storedText(f, vals[i].String)
			}
			have[strings.Join(parts, ", ")] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("engine: check %s %s: %w", r.Name, fieldNames(set), err)
		}
	}
	return have, nil
}

// valuesQuery selects the records of r whose f is one of values.
func (s *Store) valuesQuery(ctx context.Context, r *Resource, f *Field, values []any, unique bool) *gorm.DB {
	q := s.from(ctx, r).Where(clause.IN{Column: col(alias, f.Column), Values: values})
	if unique && skipsEmpty(f) {
		q = q.Where(alias + "." + quote(f.Column) + " <> ''")
	}
	return q
}

// tuplesQuery selects set's columns of the records of r that hold one of tuples.
func (s *Store) tuplesQuery(ctx context.Context, r *Resource, set []*Field, tuples [][]any, unique bool) *gorm.DB {
	cols := make([]string, len(set))
	var eq, partial []string
	for i, f := range set {
		cols[i] = alias + "." + quote(f.Column)
		eq = append(eq, cols[i]+" = ?")
		if unique && skipsEmpty(f) {
			partial = append(partial, cols[i]+" <> ''")
		}
	}
	one := "(" + strings.Join(append(eq, partial...), " AND ") + ")"
	conds := make([]string, len(tuples))
	args := make([]any, 0, len(tuples)*len(set))
	for i, t := range tuples {
		conds[i] = one
		args = append(args, t...)
	}
	return s.from(ctx, r).Select(strings.Join(cols, ", ")).Where(strings.Join(conds, " OR "), args...)
}

// storedText renders a stored value read as text as text renders the record's value: a
// boolean is stored as 1 or 0 on SQLite.
func storedText(f *Field, s string) string {
	if f.Type == TypeBool {
		switch s {
		case "1", "t":
			return "true"
		case "0", "f":
			return "false"
		}
	}
	return s
}

// checkReferences reports the records whose value of f names no record of f.References,
// neither in the partition nor, when f refers to r itself, in the batch.
func (s *Store) checkReferences(ctx context.Context, r *Resource, f *Field, recs []Record, ok []bool, bulk *BulkError) error {
	to := f.References
	inBatch := map[string]bool{}
	if to == r {
		for i, rec := range recs {
			if ok[i] {
				inBatch[text(rec[r.Key[0].Index])] = true
			}
		}
	}
	var values []any
	seen := map[string]bool{}
	for i, rec := range recs {
		if v := rec[f.Index]; ok[i] && v != nil && !inBatch[text(v)] && !seen[text(v)] {
			seen[text(v)] = true
			values = append(values, v)
		}
	}
	have, err := s.existing(ctx, to, to.Key[0], values, false)
	if err != nil {
		return err
	}
	for i, rec := range recs {
		if v := rec[f.Index]; ok[i] && v != nil && !inBatch[text(v)] && !have[text(v)] {
			bulk.Rows = append(bulk.Rows, RowError{Row: i, Member: f.Name,
				Msg: fmt.Sprintf("%s %s names no %s", f.Name, text(v), to.Name)})
		}
	}
	return nil
}

// existing returns which of values (of r's stored field f) the partition holds, by text. For a
// unique constraint it repeats its index's condition (see skipsEmpty), without which neither
// store may use the index and each batch read the whole table.
func (s *Store) existing(ctx context.Context, r *Resource, f *Field, values []any, unique bool) (map[string]bool, error) {
	have := map[string]bool{}
	for start := 0; start < len(values); start += existingBatch {
		part := values[start:min(start+existingBatch, len(values))]
		args := make([]any, len(part))
		for i, v := range part {
			args[i] = storageValue(v)
		}
		var found []string
		err := s.valuesQuery(ctx, r, f, args, unique).Pluck(alias+"."+quote(f.Column), &found).Error
		if err != nil {
			return nil, fmt.Errorf("engine: check %s.%s: %w", r.Name, f.Name, translate(r, err))
		}
		for _, v := range found {
			have[v] = true
		}
	}
	return have, nil
}
