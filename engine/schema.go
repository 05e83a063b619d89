package engine

import (
	"fmt"
	"strings"
)

// columnType returns the SQL type of a field. Text columns on PostgreSQL use the "C" collation
// so that sorting and comparison are byte-wise, as on SQLite, and datetime text orders by instant.
func (s *Store) columnType(f *Field) string {
	if s.dialect == Postgres {
		switch f.Type {
		case TypeUUID:
			return "uuid"
		case TypeBool:
			return "boolean"
		case TypeInt:
			return "integer"
		default:
			return `text COLLATE "C"`
		}
	}
	switch f.Type {
	case TypeBool, TypeInt:
		return "INTEGER"
	default:
		return "TEXT"
	}
}

// indexName names an index after its table and columns, so that a unique violation reported
// by PostgreSQL can be traced back to the fields.
func indexName(prefix string, r *Resource, fields []*Field) string {
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f.Column
	}
	return identifier(prefix + "_" + r.Table + "_" + strings.Join(cols, "_"))
}

// identifier returns name as a PostgreSQL identifier of at most 63 bytes: a longer one is cut
// to 50 and given a hash of the whole, where PostgreSQL would cut it silently (and a migration
// looking for the full name would never find the index it made).
func identifier(name string) string {
	if len(name) > 63 {
		name = fmt.Sprintf("%s_%x", name[:50], fnv32(name))
	}
	return name
}

// skipsEmpty reports whether the index of a unique constraint with f leaves out the records
// whose f is the empty string (WHERE f <> ”): an omitted string member is stored as "", and
// must not collide with other omitted ones. A query that is to use such an index must carry the
// same condition.
func skipsEmpty(f *Field) bool { return f.Type == TypeString && !f.Key }

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// IndexPlan lists the indexes a resource gets: unique constraints, then one index per filter,
// per scope field and for the default sort (with the key appended), then the extra ones.
// Single-field indexes that another index already leads with are dropped; the index of a
// constraint that folds case leads with an expression, which serves no comparison of the
// column itself (an exact filter), and so covers nothing.
func IndexPlan(r *Resource) (unique []Unique, plain [][]*Field) {
	unique = r.Unique
	var cands [][]*Field
	sortIdx := []*Field{}
	for _, t := range r.DefaultSort {
		sortIdx = append(sortIdx, t.Field)
	}
	if !(len(sortIdx) == len(r.Key) && sameFields(sortIdx, r.Key)) {
		for _, k := range r.Key {
			if !containsField(sortIdx, k) {
				sortIdx = append(sortIdx, k)
			}
		}
		cands = append(cands, sortIdx)
	}
	cands = append(cands, r.Indexes...)
	for _, sc := range r.Scope {
		if sc.Field != nil {
			cands = append(cands, []*Field{sc.Field})
		}
		for _, c := range sc.Any {
			cands = append(cands, []*Field{c.Local})
		}
	}
	for _, f := range r.Filters {
		if f.Field.Stored() {
			cands = append(cands, []*Field{f.Field})
		} else if c := f.Field.Computed; c != nil && !c.Count {
			cands = append(cands, []*Field{c.Local})
		}
	}
	covered := func(lead *Field) bool {
		if r.Key[0] == lead {
			return true
		}
		for _, u := range unique {
			if u.Fields[0] == lead && !u.folds(lead) {
				return true
			}
		}
		for _, set := range plain {
			if set[0] == lead {
				return true
			}
		}
		return false
	}
	for _, c := range cands {
		if len(c) == 1 && covered(c[0]) {
			continue
		}
		dup := false
		for _, p := range plain {
			dup = dup || sameFields(p, c)
		}
		if !dup {
			plain = append(plain, c)
		}
	}
	return unique, plain
}

func sameFields(a, b []*Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsField(fs []*Field, f *Field) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

// Remote tables of computed members and links are indexed on the remote field, so that the
// correlated subqueries are index lookups.
func linkIndexes(reg *Registry) map[*Resource][][]*Field {
	out := map[*Resource][][]*Field{}
	add := func(c *Computed) {
		if c == nil || c.Remote.Key && len(c.From.Key) == 1 {
			return
		}
		out[c.From] = append(out[c.From], []*Field{c.Remote})
	}
	for _, r := range reg.Resources() {
		for _, f := range r.Members {
			add(f.Computed)
		}
		// A filter on a lookup runs `local IN (SELECT remote FROM from WHERE field op ?)`.
		for _, f := range r.Filters {
			if c := f.Field.Computed; c != nil && !c.Count {
				out[c.From] = append(out[c.From], []*Field{c.Field, c.Remote})
			}
		}
		for _, sc := range r.Scope {
			for _, c := range append([]*Computed{sc.Via}, sc.Any...) {
				if c != nil {
					add(c)
					out[c.From] = append(out[c.From], []*Field{c.Field, c.Remote})
				}
			}
		}
	}
	return out
}

// ddlStatement is one statement of a resource's DDL: table names the table it creates, on the
// existing table it changes (an index's, or the content table whose chunks compress turns to
// lz4), index the index it creates, if any, and unique the constraint whose index it is (nil
// for others). An index's concurrently is its PostgreSQL build on a table that exists
// (CREATE INDEX CONCURRENTLY, without IF NOT EXISTS: see buildIndexes).
type ddlStatement struct {
	sql, table, on, index string
	concurrently          string
	unique                *Unique
	compress              bool
}

// indexDDL returns the two forms of an index's statement: sql, idempotent, for a migration's
// transaction (a new table's, or SQLite's), and concurrently, for PostgreSQL's build on a table
// that exists. where, when not empty, makes it partial.
func indexDDL(unique bool, name, table string, cols []string, where string) (sql, concurrently string) {
	kind := "INDEX"
	if unique {
		kind = "UNIQUE INDEX"
	}
	rest := fmt.Sprintf("%s ON %s (%s)", quote(name), table, strings.Join(cols, ", "))
	if where != "" {
		rest += " WHERE " + where
	}
	return "CREATE " + kind + " IF NOT EXISTS " + rest, "CREATE " + kind + " CONCURRENTLY " + rest
}

// DDL returns the statements that create a resource's table and indexes, idempotently: the
// table first, then its indexes and its content table.
func (s *Store) DDL(r *Resource, extra [][]*Field) []ddlStatement {
	var cols []string
	for _, f := range r.Fields {
		col := quote(f.Column) + " " + s.columnType(f)
		if f.Key {
			col += " NOT NULL"
		}
		cols = append(cols, col)
	}
	keys := make([]string, len(r.Key))
	for i, k := range r.Key {
		keys[i] = quote(k.Column)
	}
	cols = append(cols, "PRIMARY KEY ("+strings.Join(keys, ", ")+")")
	stmts := []ddlStatement{{sql: fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n  %s\n)", s.Table(r), strings.Join(cols, ",\n  ")), table: r.Table}}
	unique, plain := IndexPlan(r)
	for _, e := range extra {
		dup := false
		for _, p := range plain {
			dup = dup || len(p) >= len(e) && sameFields(p[:len(e)], e)
		}
		if !dup && !(len(e) == 1 && e[0] == r.Key[0]) {
			plain = append(plain, e)
		}
	}
	for _, u := range unique {
		cols := make([]string, len(u.Fields))
		var where []string
		for i, f := range u.Fields {
			cols[i] = s.uniqueExpr("", u, f)
			// An omitted string is stored as "": it must not collide with other omitted ones.
			if skipsEmpty(f) {
				where = append(where, quote(f.Column)+" <> ''")
			}
		}
		name := uniqueIndexName(r, u)
		stmt, conc := indexDDL(true, name, s.Table(r), cols, strings.Join(where, " AND "))
		stmts = append(stmts, ddlStatement{sql: stmt, concurrently: conc, on: r.Table, index: name, unique: &u})
	}
	for _, p := range plain {
		cols := make([]string, len(p))
		for i, f := range p {
			cols[i] = quote(f.Column)
		}
		name := indexName("ix", r, p)
		stmt, conc := indexDDL(false, name, s.Table(r), cols, "")
		stmts = append(stmts, ddlStatement{sql: stmt, concurrently: conc, on: r.Table, index: name})
	}
	if r.Content != "" {
		stmts = append(stmts, s.contentDDL(r)...)
	}
	return stmts
}
