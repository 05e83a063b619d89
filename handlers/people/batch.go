package people

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"credo/engine"
)

// Statement sizes. SQLite takes at most 32,766 bind variables per statement; the lookups
// stay well below.
const (
	// lookupChunk is how many values one IN list of a lookup holds.
	lookupChunk = 500
)

// batch is the records of one resource that an import writes. Their drafts are built as the
// engine's bulk load reads them (engine.RowSource), so that a load holds one chunk of drafts
// at a time rather than the whole file's: built all at once, a 32 MiB import (122,000 rows)
// held 430 MB of drafts (about 3.4 KB a row over the four resources) and peaked at 1.1 GiB
// RSS on SQLite, 0.9 GiB on PostgreSQL.
type batch struct {
	r *engine.Resource
	// of returns the members of file row i's record, or nil when the row has none here.
	of func(i int) map[string]any
	// columns maps a member of r to the import's column a problem of it is reported under;
	// column is the one of the members it does not name.
	columns map[string]string
	column  string
	// rows are the file rows of the records read so far, by their index in the load.
	rows []int
}

// insert writes the records of the file's n rows with the engine's bulk load (COPY on
// PostgreSQL), which checks and writes them a chunk at a time; tx is the import's
// transaction, so a failure in any chunk undoes everything. Problems the engine finds are
// reported under the file rows and the import's columns, each message naming the record.
func (b *batch) insert(ctx context.Context, tx *engine.Store, n int) error {
	b.rows = b.rows[:0]
	i := 0
	next := func() (engine.Draft, error) {
		for ; i < n; i++ {
			values := b.of(i)
			if values == nil {
				continue
			}
			d, err := b.r.DraftOf(values)
			if err != nil {
				return engine.Draft{}, fmt.Errorf("people: row %d: %w", i, err)
			}
			b.rows = append(b.rows, i)
			i++
			return d, nil
		}
		return engine.Draft{}, io.EOF
	}
	_, err := tx.InsertFrom(ctx, b.r, next, engine.AllOrganizations(), engine.BulkOptions{})
	var bulk *engine.BulkError
	if errors.As(err, &bulk) {
		ps := &problems{}
		ps.rows.Merge(&bulk.Problems, func(re engine.RowError) engine.RowError {
			column, ok := b.columns[re.Member]
			if !ok {
				column = b.column
			}
			re.Row, re.Member, re.Msg = b.rows[re.Row], column, "the row's "+b.r.Name+": "+re.Msg
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
