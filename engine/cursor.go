package engine

import (
	"encoding/json"
	"fmt"
	"slices"

	"gorm.io/gorm/clause"
)

// Cursor is a keyset position: the stored values of one row in the order columns of a query
// (OrderTerms), as the database holds them — a string (uuid, string, datetime text), an
// int64, a bool, or nil. A query whose After is a cursor answers the rows that its order puts
// strictly after that row, by a condition on the order columns rather than an OFFSET, so that
// a page deep in a result costs what the first page costs.
type Cursor []any

// OrderTerms returns the order of a query sorted by sort: its terms, then each key field not
// among them, ascending. The key makes the order total, so that pages are stable and a Cursor
// names exactly one position.
func (r *Resource) OrderTerms(sort []SortTerm) []SortTerm {
	out := slices.Clone(sort)
	for _, k := range r.Key {
		if !slices.ContainsFunc(sort, func(t SortTerm) bool { return t.Field == k }) {
			out = append(out, SortTerm{Field: k})
		}
	}
	return out
}

// CursorOf converts the JSON values of a cursor (as encoding/json decodes them with
// UseNumber) into a Cursor for a query sorted by sort; values that do not fit the order
// columns are an error.
func (r *Resource) CursorOf(sort []SortTerm, vals []any) (Cursor, error) {
	terms := r.OrderTerms(sort)
	if len(vals) != len(terms) {
		return nil, fmt.Errorf("the position has %d values; the order has %d columns", len(vals), len(terms))
	}
	c := make(Cursor, len(vals))
	for i, v := range vals {
		f := terms[i].Field
		ok := false
		switch x := v.(type) {
		case nil:
			ok = !f.Key
		case bool:
			c[i], ok = x, f.Type == TypeBool
		case json.Number:
			n, err := x.Int64()
			c[i], ok = n, err == nil && f.Type == TypeInt
		case string:
			c[i], ok = x, f.Type != TypeBool && f.Type != TypeInt
		}
		if !ok {
			return nil, fmt.Errorf("the position's value %d does not fit %s", i+1, f.Name)
		}
	}
	return c, nil
}

// seek renders the keyset condition of a query ordered by terms: rows strictly after the
// position at. It is the expanded form
//
//	beyond(1) OR (same(1) AND (beyond(2) OR (same(2) AND …)))
//
// rather than a row-value comparison, because the terms may mix directions and hold NULLs,
// which the two databases place differently: PostgreSQL sorts NULL after every value in
// ascending order (before, descending), SQLite before. A redundant bound on the first column
// (`c >= v`) lets the database seek its index to the position instead of reading up to it.
// Nil values of at render as IS NULL; the others are bind parameters.
//
// When the first column's NULLs follow a value (an ascending column on PostgreSQL, a
// descending one on SQLite) the rows after it are `c > v OR c IS NULL`, which no index range
// covers; ListPage then reads the values (values: the condition without the NULLs, a pure
// range) and, when the page is not full, the NULLs separately.
func (s *Store) seek(terms []SortTerm, at []any, values bool) clause.Expression {
	var expr clause.Expression
	for i := len(terms) - 1; i >= 0; i-- {
		c, v, f := col(alias, terms[i].Field.Column), at[i], terms[i].Field
		beyond := s.beyond(c, f.Key || (i == 0 && values), terms[i].Desc, v)
		if expr != nil {
			next := clause.And(clause.Eq{Column: c, Value: v}, expr)
			if beyond == nil {
				beyond = next
			} else {
				beyond = clause.Or(beyond, next)
			}
		}
		expr = beyond
	}
	if expr == nil {
		return clause.Expr{SQL: "1 = 0"}
	}
	if lead := s.lead(terms[0], at[0], values); lead != nil && (len(terms) > 1 || values) {
		return clause.And(lead, expr)
	}
	return expr
}

// nullsLast reports whether NULL comes after every value in the direction desc.
func (s *Store) nullsLast(desc bool) bool { return (s.dialect == Postgres) != desc }

// nullsFollow reports whether the NULLs of t's column come after the value v in t's order.
func (s *Store) nullsFollow(t SortTerm, v any) bool {
	return v != nil && !t.Field.Key && s.nullsLast(t.Desc)
}

// beyond renders "strictly after v in this column's direction", nil when nothing is;
// notNull leaves the column's NULLs out.
func (s *Store) beyond(c clause.Column, notNull, desc bool, v any) clause.Expression {
	if v == nil {
		if s.nullsLast(desc) {
			return nil // NULLs are the last values: nothing lies beyond them
		}
		return clause.Neq{Column: c, Value: nil}
	}
	var cmp clause.Expression = clause.Gt{Column: c, Value: v}
	if desc {
		cmp = clause.Lt{Column: c, Value: v}
	}
	if s.nullsLast(desc) && !notNull {
		return clause.Or(cmp, clause.Eq{Column: c, Value: nil})
	}
	return cmp
}

// lead renders "at v or after" on the first order column when that is one index range, nil
// otherwise (NULLs following v: see seek; values asks for the range without them).
func (s *Store) lead(t SortTerm, v any, values bool) clause.Expression {
	c := col(alias, t.Field.Column)
	switch {
	case v == nil && s.nullsLast(t.Desc):
		return clause.Eq{Column: c, Value: nil}
	case v == nil:
		return nil
	case s.nullsFollow(t, v) && !values:
		return nil
	case t.Desc:
		return clause.Lte{Column: c, Value: v}
	default:
		return clause.Gte{Column: c, Value: v}
	}
}
