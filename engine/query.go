package engine

import "fmt"

// Format is the representation of list, search and export results.
type Format string

// The result formats.
const (
	FormatJSON Format = "json"
	FormatCSV  Format = "csv"
)

// Cond is one typed filter condition.
type Cond struct {
	Field *Field
	Op    MatchOp
	Value any
}

// Query is a typed count, list, search or export request: the edge (handlers/request.ListQuery
// for a query string, a module for its own needs) builds it from what a client sent and has
// already refused what is malformed; the engine only runs it.
type Query struct {
	Conds []Cond
	// Page is 1-based; Take is the page size. Page is ignored when After is set.
	Page, Take int
	// After, when set, starts the page after that position of the query's order instead of
	// at Page (keyset paging; see Cursor).
	After Cursor
	Sort  []SortTerm
	// Fields is the projection, in output order.
	Fields []*Field
	Format Format
	// org is the organization the verb's scope limits the query to ("" for none); the verbs
	// set it from their Scope argument.
	org string
	// peek reads one row beyond Take, to tell whether a next page exists.
	peek bool
	// zone limits the rows to the values or the NULLs of the first order column (see seek).
	zone zone
	// Origin holds the Origin.* parameters, checked and kept for logging only.
	Origin map[string]string
}

// Sortable lists the fields a client may sort r's records on.
func (r *Resource) Sortable() []string {
	var out []string
	for _, f := range r.Fields {
		if !f.WriteOnly {
			out = append(out, f.Name)
		}
	}
	return out
}

// SortTerms reads `Field`, `Field asc` or `Field desc` terms (case-insensitive direction) of
// r's stored, readable members.
func (r *Resource) SortTerms(terms []string) ([]SortTerm, error) { return parseSortTerms(r, terms) }

// ParseKey reads the path segments of an item into key values; a segment that is not of the
// key's type means no such record (404), as decisions §4 says.
func (r *Resource) ParseKey(segments []string) ([]any, error) {
	if len(segments) != len(r.Key) {
		return nil, fmt.Errorf("engine: %s takes %d key segments: %w", r.Name, len(r.Key), ErrNotFound)
	}
	key := make([]any, len(segments))
	for i, s := range segments {
		v, err := r.Key[i].ParseText(s)
		if err != nil {
			return nil, fmt.Errorf("engine: %s key %s %q: %w", r.Name, r.Key[i].Name, s, ErrNotFound)
		}
		key[i] = v
	}
	return key, nil
}

// KeySegment returns the path segment of rec's i-th key member, as ParseKey reads it back: a
// text key as it is, another as it prints.
func (r *Resource) KeySegment(rec Record, i int) string {
	v := rec[r.Key[i].Index]
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// zone is a part of a query's rows by the first order column: a keyset page whose position
// lies before that column's NULLs reads the values after it, then the NULLs (ListPage).
type zone int

const (
	zoneAll zone = iota
	// zoneValues: rows whose first order column is not NULL, after the position.
	zoneValues
	// zoneNulls: rows whose first order column is NULL, from the first (no position).
	zoneNulls
)
