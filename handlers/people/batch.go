package people

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"credo/engine"
)

// Statement sizes. SQLite takes at most 32,766 bind variables per statement; the lookups
// stay well below.
const (
	// lookupChunk is how many values one IN list of a lookup holds.
	lookupChunk = 500
)

// batch is the records of one resource that an import writes, with the file row of each.
type batch struct {
	r      *engine.Resource
	drafts []engine.Draft
	rows   []int
	err    error
}

// add appends a record of the given members for a file row.
func (b *batch) add(row int, values map[string]any) {
	d, err := b.r.DraftOf(values)
	if err != nil {
		b.err = fmt.Errorf("people: %w", err)
		return
	}
	b.drafts, b.rows = append(b.drafts, d), append(b.rows, row)
}

// insert writes the records with the engine's bulk insert (COPY on PostgreSQL);
// tx is the import's transaction, so a failure undoes everything. Problems the engine finds
// are reported under the file rows.
func (b *batch) insert(ctx context.Context, tx *engine.Store) error {
	if b.err != nil {
		return b.err
	}
	err := tx.InsertAll(ctx, b.r, b.drafts, engine.AllOrganizations())
	var bulk *engine.BulkError
	if errors.As(err, &bulk) {
		ps := &problems{}
		ps.rows.Merge(&bulk.Problems, func(re engine.RowError) engine.RowError {
			if re.Member == "" {
				re.Member = rowMember
			}
			re.Row, re.Msg = b.rows[re.Row], b.r.Name+" "+re.Msg
			return re
		})
		return ps.err()
	}
	return err
}

// lookup calls fn with the given members of every record of r whose member matches one of
// values by op (engine.MatchIn, or engine.MatchSame for a member that identifies a record), in
// lists of lookupChunk values, within scope.
func lookup(ctx context.Context, st *engine.Store, r *engine.Resource, member string, op engine.MatchOp, values []string, scope engine.Scope, members []string, fn func(engine.Record)) error {
	in, ok := r.Member(member)
	if !ok {
		return fmt.Errorf("people: %s has no member %s", r.Name, member)
	}
	fields := make([]*engine.Field, len(members))
	for i, name := range members {
		if fields[i], ok = r.Member(name); !ok {
			return fmt.Errorf("people: %s has no member %s", r.Name, name)
		}
	}
	sort.Strings(values)
	for start := 0; start < len(values); start += lookupChunk {
		chunk := values[start:min(start+lookupChunk, len(values))]

		q := engine.Query{Conds: []engine.Cond{{Field: in, Op: op, Value: chunk}}, Fields: fields}
		err := st.Stream(ctx, r, q, scope, func(rec engine.Record) error {
			fn(rec)
			return nil
		})
		if err != nil {
			return fmt.Errorf("people: look up %s by %s: %w", r.Name, member, err)
		}
	}
	return nil
}

func str(r *engine.Resource, rec engine.Record, name string) string {
	s, _ := rec.Get(r, name).(string)
	return s
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
