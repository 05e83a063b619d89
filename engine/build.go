package engine

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// alias is the name of the resource's own table in every query the engine builds.
const alias = "t"

func col(table, column string) clause.Column { return clause.Column{Table: table, Name: column} }

// from starts a query on the resource's partition-qualified table, aliased t.
func (s *Store) from(ctx context.Context, r *Resource) *gorm.DB {
	return s.db.WithContext(s.detach(ctx)).Table(s.Table(r) + " AS " + alias)
}

// selectExpr renders the projection: stored columns and correlated subqueries for computed
// members. Names come only from descriptors.
func (s *Store) selectExpr(r *Resource, fields []*Field) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		if f.Stored() {
			parts[i] = alias + "." + quote(f.Column)
			continue
		}
		c := f.Computed
		sub := fmt.Sprintf("l%d", i)
		where := fmt.Sprintf("%s.%s = %s.%s", sub, quote(c.Remote.Column), alias, quote(c.Local.Column))
		if c.Count {
			parts[i] = fmt.Sprintf("(SELECT COUNT(*) FROM %s AS %s WHERE %s) AS %s", s.Table(c.From), sub, where, quote(snake(f.Name)))
		} else {
			parts[i] = fmt.Sprintf("(SELECT %s.%s FROM %s AS %s WHERE %s LIMIT 1) AS %s", sub, quote(c.Field.Column), s.Table(c.From), sub, where, quote(snake(f.Name)))
		}
	}
	return strings.Join(parts, ", ")
}

// cond renders one typed condition on a stored column of the table aliased tbl.
func (s *Store) cond(tbl string, f *Field, op MatchOp, v any) clause.Expression {
	c := col(tbl, f.Column)
	if d, ok := v.(DateTime); ok {
		// Stored datetimes start with their fixed-width UTC instant: compare that prefix.
		p := d.InstantKey()
		switch op {
		case MatchGte:
			return clause.Gte{Column: c, Value: p}
		case MatchLt:
			return clause.Lt{Column: c, Value: p}
		default:
			return clause.And(clause.Gte{Column: c, Value: p}, clause.Lt{Column: c, Value: p + "~"})
		}
	}
	switch op {
	case MatchIn:
		vals := values(v)
		if len(vals) == 0 {
			return clause.Expr{SQL: "1 = 0"}
		}
		return clause.IN{Column: c, Values: vals}
	case MatchSame:
		return s.sameCond(tbl, f, values(v))
	case MatchContains:
		return s.Contains(clause.Expr{SQL: "?", Vars: []any{c}}, v.(string))
	case MatchGte:
		return clause.Gte{Column: c, Value: v}
	case MatchLt:
		return clause.Lt{Column: c, Value: v}
	}
	return clause.Eq{Column: c, Value: v}
}

// values returns the values of a MatchIn or MatchSame condition: a []string, a []any, or one
// value.
func values(v any) []any {
	switch x := v.(type) {
	case []string:
		vals := make([]any, len(x))
		for i, s := range x {
			vals[i] = s
		}
		return vals
	case []any:
		return x
	}
	return []any{v}
}

// sameCond renders a MatchSame condition on f, one of the table aliased tbl: its column, or
// the column folded as its unique constraints fold it, is one of vals (folded alike), and not
// an empty string. The expression is the one of the constraint's index (uniqueExpr), and so is
// the condition on empty strings, without which neither store may use the partial index.
func (s *Store) sameCond(tbl string, f *Field, vals []any) clause.Expression {
	u := Unique{Fields: []*Field{f}, Fold: f.fold}
	var keep []any
	for _, v := range u.sameValues(f, vals) {
		if v != "" {
			keep = append(keep, v)
		}
	}
	if len(keep) == 0 {
		return clause.Expr{SQL: "1 = 0"}
	}
	in := clause.Expr{SQL: s.uniqueExpr(tbl, u, f) + " IN ?", Vars: []any{keep}}
	if !skipsEmpty(f) {
		return in
	}
	// A literal, as the index's own condition is: a parameter would not prove it.
	return clause.And(in, clause.Expr{SQL: tbl + "." + quote(f.Column) + " <> ''"})
}

// Contains returns the condition that the text expression e (a column, or SQL text of the
// caller's own, never a request value) has v as a substring under simple case folding, the
// rule of every contains filter (see fold.go); v is matched literally, % and _ included.
func (s *Store) Contains(e clause.Expression, v string) clause.Expression {
	switch {
	case asciiFold(v):
		pattern := "%" + escapeLike(v) + "%"
		if s.dialect == Postgres {
			// ILIKE folds by the collation, the "C" one ASCII only (text columns have it).
			return clause.Expr{SQL: `? COLLATE "C" ILIKE ?`, Vars: []any{e, pattern}}
		}
		return clause.Expr{SQL: `? LIKE ? ESCAPE '\'`, Vars: []any{e, pattern}}
	case s.dialect == Postgres:
		return clause.Expr{SQL: "? ~ ?", Vars: []any{e, foldRegexp(v)}}
	}
	return clause.Expr{SQL: foldFunction + "(?, ?)", Vars: []any{e, v}}
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// linkCond renders `t.local IN (SELECT x.remote FROM other x WHERE <x.field op v>)`.
func (s *Store) linkCond(c *Computed, op MatchOp, v any) clause.Expression {
	return clause.Expr{SQL: "? IN (?)", Vars: []any{col(alias, c.Local.Column), s.linkSub(c, op, v)}}
}

// linkSub is the subquery of linkCond: `SELECT x.remote FROM other x WHERE <x.field op v>`.
func (s *Store) linkSub(c *Computed, op MatchOp, v any) *gorm.DB {
	return s.db.Table(s.Table(c.From) + " AS x").Select("x." + quote(c.Remote.Column)).
		Where(s.cond("x", c.Field, op, v))
}

// where adds the filter and scope conditions of q.
func (s *Store) where(tx *gorm.DB, r *Resource, q Query) *gorm.DB {
	for _, c := range q.Conds {
		if c.Field.Stored() {
			tx = tx.Where(s.cond(alias, c.Field, c.Op, c.Value))
		} else {
			tx = tx.Where(s.linkCond(c.Field.Computed, c.Op, c.Value))
		}
	}
	return s.scope(tx, r, q.org)
}

// scope limits tx to an organization with the resource's scope conditions.
func (s *Store) scope(tx *gorm.DB, r *Resource, org string) *gorm.DB {
	if org == "" {
		return tx
	}
	for _, sc := range r.Scope {
		switch {
		case sc.Any != nil:
			tx = tx.Where(s.anyLinkCond(sc.Any, org))
		case sc.Via == nil:
			tx = tx.Where(clause.Eq{Column: col(alias, sc.Field.Column), Value: org})
		default:
			tx = tx.Where(s.linkCond(sc.Via, MatchEq, org))
		}
	}
	return tx
}

// linked is link, the condition that a record's member local is among those that an
// organization's records refer to, and that it is not the nil UUID: a uuid member omitted from
// a write stores the nil UUID, which refers to nothing. Without it a record keyed by the nil
// UUID (a load may write one) would be the record of every organization with a record that
// omits the reference, such as an address that the people without one would "refer to". The
// links of `any` are such optional references; a single link's remote member (a person's
// user) is required, so it never holds the nil UUID.
func linked(local *Field, link clause.Expression) clause.Expression {
	if local.Type != TypeUUID {
		return link
	}
	return clause.And(clause.Neq{Column: col(alias, local.Column), Value: NilUUID}, link)
}

// anyLinkCond renders links of which one must hold for the organization org: the links from
// one local field are one `t.local IN (SELECT … UNION ALL SELECT …)`, which PostgreSQL runs
// as one semi-join (an OR of subqueries would test every row against each), and the locals
// are ORed.
func (s *Store) anyLinkCond(links []*Computed, org string) clause.Expression {
	var locals []*Field
	subs := map[*Field][]any{}
	for _, c := range links {
		if subs[c.Local] == nil {
			locals = append(locals, c.Local)
		}
		subs[c.Local] = append(subs[c.Local], s.linkSub(c, MatchEq, org))
	}
	var or []clause.Expression
	for _, l := range locals {
		union := strings.TrimSuffix(strings.Repeat("? UNION ALL ", len(subs[l])), " UNION ALL ")
		or = append(or, linked(l, clause.Expr{SQL: "? IN (" + union + ")", Vars: append([]any{col(alias, l.Column)}, subs[l]...)}))
	}
	if len(or) == 1 {
		return or[0]
	}
	return clause.Or(or...)
}

// whereKey adds equality on every key field.
func whereKey(tx *gorm.DB, r *Resource, key []any) *gorm.DB {
	for i, k := range r.Key {
		tx = tx.Where(clause.Eq{Column: col(alias, k.Column), Value: key[i]})
	}
	return tx
}

// order adds the order of terms (see OrderTerms).
func order(tx *gorm.DB, r *Resource, terms []SortTerm) *gorm.DB {
	var cols []clause.OrderByColumn
	for _, t := range r.OrderTerms(terms) {
		cols = append(cols, clause.OrderByColumn{Column: col(alias, t.Field.Column), Desc: t.Desc})
	}
	return tx.Order(clause.OrderBy{Columns: cols})
}
