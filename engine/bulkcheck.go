package engine

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// existingBatch bounds the values of one IN (…) when checking which values exist.
const existingBatch = 500

// checkChunk reports the problems of the load's chunk, besides the member problems that
// prepareNew found (required, null, validate rules, organization):
//   - a key or unique constraint that the row shares with an earlier row of the load ("…
//     repeats row j"; null and, for unique constraints, empty strings never collide, as in the
//     database; a constraint that folds case compares as its index does, see Fold);
//   - a key or unique constraint that the partition held before the load (with the value
//     stored, when it differs from the row's only by the constraint's fold);
//   - a value of a member that declares `references` naming no record of the referenced
//     resource, in the partition or, when it refers to r itself, in the load (the rows after
//     the chunk are looked at once all are read: checkLaterRefs).
//
// The problems of each set come in the order of the rows, each row's repeat before its
// "already has", as a whole file's came in one pass before the load read by chunks.
func (l *bulkLoad) checkChunk(ctx context.Context) error {
	for si, set := range l.sets {
		if err := l.checkSet(ctx, set, l.seen[si], si > 0); err != nil {
			return err
		}
	}
	for _, f := range l.r.Fields {
		if f.References != nil {
			if err := l.checkReferences(ctx, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSet reports the chunk's rows whose tuple of set repeats an earlier row's, or that the
// partition held before the load. It asks the partition about the tuples first seen in the
// chunk only: the load may have written the earlier ones, and a repeated tuple was stored
// before the load exactly when its first row's was.
func (l *bulkLoad) checkSet(ctx context.Context, set Unique, seen map[tupleHash]firstRow, unique bool) error {
	r := l.r
	var firsts, repeats []int // indexes in the chunk
	var keys, texts []string  // by index in the chunk, for the rows of firsts and repeats
	var tuples [][]any        // the values of firsts
	keys, texts = make([]string, len(l.drafts)), make([]string, len(l.drafts))
	for i, d := range l.drafts {
		if !l.ok[i] {
			continue
		}
		k, txt, skip := tuple(set, d.rec, unique)
		if skip {
			continue
		}
		keys[i], texts[i] = k, txt
		h := hashTuple(k)
		if first, dup := seen[h]; dup {
			l.bulk.Problems.Add(RowError{Row: l.rows[i], Member: set.Fields[0].Name,
				Msg: fmt.Sprintf("%s %s repeats row %d", fieldNames(set.Fields), txt, first.row)})
			repeats = append(repeats, i)
			continue
		}
		seen[h] = firstRow{row: int32(l.rows[i])}
		firsts = append(firsts, i)
		vals := make([]any, len(set.Fields))
		for j, f := range set.Fields {
			vals[j] = storageValue(d.rec[f.Index])
		}
		tuples = append(tuples, vals)
	}
	have := map[string]string{}
	if !l.empty {
		var err error
		if have, err = l.s.existingTuples(ctx, r, set, tuples, unique); err != nil {
			return err
		}
	}
	already := func(i int) {
		msg := fmt.Sprintf("another %s already has %s %s", r.Name, fieldNames(set.Fields), texts[i])
		if stored := have[keys[i]]; stored != texts[i] {
			msg += " (stored as " + stored + ")"
		}
		l.bulk.Problems.Add(RowError{Row: l.rows[i], Member: set.Fields[0].Name, Msg: msg})
	}
	for _, i := range firsts {
		if _, ok := have[keys[i]]; ok {
			h := hashTuple(keys[i])
			seen[h] = firstRow{row: seen[h].row, stored: true}
			already(i)
		}
	}
	for _, i := range repeats {
		if seen[hashTuple(keys[i])].stored {
			already(i)
		}
	}
	return nil
}

// hashTuple is the hash of a tuple's key (see tuple) that a load keeps across chunks.
func hashTuple(k string) tupleHash {
	sum := sha256.Sum256([]byte(k))
	return tupleHash(sum[:16])
}

// checkReferences reports the chunk's rows whose value of f names no record of f.References
// in the partition. A value of a member referring to r itself may name a row of the load: one
// read so far, or one read later, which checkLaterRefs looks for once every row is read.
func (l *bulkLoad) checkReferences(ctx context.Context, f *Field) error {
	to := f.References
	self := to == l.r
	inLoad := func(v any) bool { // v names a row read so far
		if !self {
			return false
		}
		_, ok := l.seen[0][hashTuple(text(v))]
		return ok
	}
	var values []any
	asked := map[string]bool{}
	for i, d := range l.drafts {
		if v := d.rec[f.Index]; l.ok[i] && v != nil && !inLoad(v) && !asked[text(v)] {
			asked[text(v)] = true
			values = append(values, v)
		}
	}
	have, err := l.s.existing(ctx, to, Unique{Fields: []*Field{to.Key[0]}}, values, false)
	if err != nil {
		return err
	}
	for i, d := range l.drafts {
		v := d.rec[f.Index]
		if _, ok := have[text(v)]; !l.ok[i] || v == nil || inLoad(v) || ok {
			continue
		}
		if self {
			l.later = append(l.later, laterRef{row: l.rows[i], field: f, value: text(v)})
			continue
		}
		l.bulk.Problems.Add(RowError{Row: l.rows[i], Member: f.Name,
			Msg: fmt.Sprintf("%s %s names no %s", f.Name, text(v), to.Name)})
	}
	return nil
}

// checkLaterRefs reports the references to r itself that named no record when their chunk
// was checked, and no row of the whole load either.
func (l *bulkLoad) checkLaterRefs() {
	for _, ref := range l.later {
		if _, ok := l.seen[0][hashTuple(ref.value)]; ok {
			continue
		}
		l.bulk.Problems.Add(RowError{Row: ref.row, Member: ref.field.Name,
			Msg: fmt.Sprintf("%s %s names no %s", ref.field.Name, ref.value, l.r.Name)})
	}
	l.later = nil
}

// tuple renders the values of set in rec as key, which compares and hashes them (tupleKey,
// of the values as set compares them), and as the text of messages ("a, b"); skip is true
// when a value is null, or an empty string of a unique constraint (its index skips empty
// strings).
func tuple(set Unique, rec Record, unique bool) (key, txt string, skip bool) {
	parts := make([]string, len(set.Fields))
	keys := parts // a set that does not fold compares the texts themselves
	if set.Fold != FoldNone {
		keys = make([]string, len(set.Fields))
	}
	for i, f := range set.Fields {
		v := rec[f.Index]
		if v == nil || (unique && v == "") {
			return "", "", true
		}
		parts[i] = text(v)
		keys[i] = set.key(f, parts[i])
	}
	return tupleKey(keys), strings.Join(parts, ", "), false
}

// key returns the form of text, a value of f, that set tells apart.
func (set Unique) key(f *Field, text string) string {
	if set.folds(f) {
		return set.Fold.Key(text)
	}
	return text
}

// tupleKey joins the texts of a tuple's values so that two tuples join alike only when their
// values are alike: each value follows its length. Joined as messages show them, ("a, b", "c")
// and ("a", "b, c") read alike, and a load took the second for a repeat of the first, which
// the database and two creates take. The key of one value is its text.
func tupleKey(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(strconv.Itoa(len(p)))
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

func text(v any) string { return fmt.Sprint(storageValue(v)) }

func fieldNames(set []*Field) string {
	names := make([]string, len(set))
	for i, f := range set {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// existingTuples returns which of tuples (values of r's stored fields set) the partition
// holds, as a map from the key that tuple gives them to the values stored ("a, b"), which
// differ from the tuple's when set folds case. The condition is an OR of equalities on every
// field, which both stores answer from the set's index (a row-value IN list is not SQLite's).
// The index of a unique constraint leaves out empty strings (see DDL): each arm repeats that
// condition, without which neither store may use the partial index, and each arm read every
// row of its first member's value instead (seeding 100,000 people slowed from 2 minutes to
// over 20). A set of one field is looked up as existing looks its values up.
func (s *Store) existingTuples(ctx context.Context, r *Resource, set Unique, tuples [][]any, unique bool) (map[string]string, error) {
	if len(set.Fields) == 1 {
		values := make([]any, len(tuples))
		for i, t := range tuples {
			values[i] = t[0]
		}
		return s.existing(ctx, r, set, values, unique)
	}
	have := map[string]string{}
	names := fieldNames(set.Fields)
	per := max(1, existingBatch/len(set.Fields))
	for start := 0; start < len(tuples); start += per {
		part := tuples[start:min(start+per, len(tuples))]
		rows, err := s.tuplesQuery(ctx, r, set, part, unique).Rows()
		if err != nil {
			return nil, fmt.Errorf("engine: check %s %s: %w", r.Name, names, translate(s, r, err))
		}
		vals := make([]sql.NullString, len(set.Fields))
		dest := make([]any, len(set.Fields))
		for i := range vals {
			dest[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("engine: check %s %s: %w", r.Name, names, err)
			}
			parts := make([]string, len(set.Fields))
			keys := make([]string, len(set.Fields))
			for i, f := range set.Fields {
				parts[i] = storedText(f, vals[i].String)
				keys[i] = set.key(f, parts[i])
			}
			have[tupleKey(keys)] = strings.Join(parts, ", ")
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("engine: check %s %s: %w", r.Name, names, err)
		}
	}
	return have, nil
}

// sameValues returns values as set compares them with its field f: folded when set folds f.
func (set Unique) sameValues(f *Field, values []any) []any {
	if !set.folds(f) {
		return values
	}
	out := make([]any, len(values))
	for i, v := range values {
		if s, ok := v.(string); ok {
			v = set.Fold.Key(s)
		}
		out[i] = v
	}
	return out
}

// valuesQuery selects the records of r whose field of set (a set of one field) is one of
// values, as set compares them: on the expression set's index holds.
func (s *Store) valuesQuery(ctx context.Context, r *Resource, set Unique, values []any, unique bool) *gorm.DB {
	f := set.Fields[0]
	q := s.from(ctx, r).Where(clause.Expr{SQL: s.uniqueExpr(alias, set, f) + " IN ?", Vars: []any{set.sameValues(f, values)}})
	if unique && skipsEmpty(f) {
		q = q.Where(alias + "." + quote(f.Column) + " <> ''")
	}
	return q
}

// tuplesQuery selects set's columns of the records of r that hold one of tuples, as set
// compares them.
func (s *Store) tuplesQuery(ctx context.Context, r *Resource, set Unique, tuples [][]any, unique bool) *gorm.DB {
	cols := make([]string, len(set.Fields))
	var eq, partial []string
	for i, f := range set.Fields {
		cols[i] = alias + "." + quote(f.Column)
		eq = append(eq, s.uniqueExpr(alias, set, f)+" = ?")
		if unique && skipsEmpty(f) {
			partial = append(partial, cols[i]+" <> ''")
		}
	}
	one := "(" + strings.Join(append(eq, partial...), " AND ") + ")"
	conds := make([]string, len(tuples))
	args := make([]any, 0, len(tuples)*len(set.Fields))
	for i, t := range tuples {
		conds[i] = one
		for j, f := range set.Fields {
			args = append(args, set.sameValues(f, t[j:j+1])[0])
		}
	}
	q := s.from(ctx, r)
	if unique && s.dialect == SQLite {
		// The statistics of a small table (an ANALYZE) made SQLite scan it for the OR of
		// pairs, which a load's every chunk grows (see bulkLoad.analyze for PostgreSQL's).
		q = s.db.WithContext(s.detach(ctx)).Table(s.Table(r) + " AS " + alias + " INDEXED BY " + quote(uniqueIndexName(r, set)))
	}
	return q.Select(strings.Join(cols, ", ")).Where(strings.Join(conds, " OR "), args...)
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

// existing returns which of values (of r's stored field, set's one) the partition holds, as a
// map from their text as set compares it to the text stored. For a unique constraint it
// repeats its index's condition (see skipsEmpty), without which neither store may use the
// index and each batch read the whole table.
func (s *Store) existing(ctx context.Context, r *Resource, set Unique, values []any, unique bool) (map[string]string, error) {
	f := set.Fields[0]
	have := map[string]string{}
	for start := 0; start < len(values); start += existingBatch {
		part := values[start:min(start+existingBatch, len(values))]
		args := make([]any, len(part))
		for i, v := range part {
			args[i] = storageValue(v)
		}
		var found []string
		err := s.valuesQuery(ctx, r, set, args, unique).Pluck(alias+"."+quote(f.Column), &found).Error
		if err != nil {
			return nil, fmt.Errorf("engine: check %s.%s: %w", r.Name, f.Name, translate(s, r, err))
		}
		for _, v := range found {
			have[set.key(f, v)] = v
		}
	}
	return have, nil
}
