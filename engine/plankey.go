package engine

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// planOp is the kind of statement a planKey describes.
type planOp uint8

// The statements the verbs plan.
const (
	planGet    planOp = iota + 1 // the projection of the record with a key
	planExists                   // the constant 1 for the record with a key
	planLock                     // the stored members of the record with a key, locked on PostgreSQL
	planCount                    // count(*) of the matches of conditions
	planList                     // a page of the matches of conditions, sorted
	planInsert                   // one row of every stored member, nothing on a taken key
)

// projection is what a statement selects.
type projection uint8

const (
	projOne    projection = iota // the constant 1 (exists), or nothing (count, insert)
	projOutput                   // Resource.Output, the full record
	projStored                   // Resource.Fields, the stored members
	projListed                   // the members planKey.fields lists
)

// planKey is the shape of a statement: everything the statement builder (Store.build) reads
// besides the values, and so the plan cache's key. It is comparable and holds no pointers or
// closures, so two requests share a plan exactly when their SQL is the same text: members are
// their index in Resource.Members, two bytes each, and the resource its name in the store's
// registry. The values (keys, condition values, the organization) stay out of it; they are
// bound to the statement's parameters in the order the builder consumes them (see
// planValues).
type planKey struct {
	op       planOp
	resource string
	proj     projection
	// conds lists the conditions: the member (2 bytes) and its matchCode (1 byte) each.
	conds string
	// fields lists the members of projListed, 2 bytes each.
	fields string
	// sort lists the sort terms: the member (2 bytes), then 1 for descending or 0.
	sort string
	// take and page are a list's page (take 0: every row); page is not read after a position.
	take, page int
	// peek reads one row beyond take (Query.peek).
	peek bool
	// zone limits the rows to the values or the NULLs of the first order column (Query.zone).
	zone zone
	// after is the keyset position (Query.After): 'v' for a value, bound after the
	// organization, 'n' for a NULL, which changes the SQL; "" for none.
	after string
	// scoped adds the resource's organization conditions; the organization is the last value.
	scoped bool
	// plannable is false when a value does not reach the statement unchanged (datetimes and
	// substrings are rewritten on the way, a list of values changes the text): such a
	// statement is built anew with its values every time. It follows from the fields above.
	plannable bool
}

// matchCodes numbers the match operations for planKey.conds.
var matchCodes = [...]MatchOp{MatchEq, MatchContains, MatchGte, MatchLt, MatchIn, MatchSame}

func matchCode(op MatchOp) byte {
	for i, m := range matchCodes {
		if m == op {
			return byte(i)
		}
	}
	panic(fmt.Sprintf("engine: unknown match %q", op))
}

func appendMember(b []byte, f *Field) []byte { return append(b, byte(f.Index>>8), byte(f.Index)) }

func member(r *Resource, s string, at int) *Field {
	return r.Members[int(s[at])<<8|int(s[at+1])]
}

// keyPlan is the key of a statement on the record with a key: get (fields nil: the full
// record), exists or lock.
func keyPlan(op planOp, r *Resource, fields []*Field, org string) planKey {
	k := planKey{op: op, resource: r.Name, scoped: org != "", plannable: true}
	switch {
	case op == planExists:
		k.proj = projOne
	case op == planLock:
		k.proj = projStored
	default:
		k.proj, k.fields = projectionOf(r, fields)
	}
	return k
}

// queryPlan is the key of a count or list statement of q.
func queryPlan(op planOp, r *Resource, q Query) planKey {
	k := planKey{op: op, resource: r.Name, scoped: q.org != "", plannable: true}
	if len(q.Conds) > 0 {
		b := make([]byte, 0, 3*len(q.Conds))
		for _, c := range q.Conds {
			if !c.Field.Stored() || c.Field.Type == TypeDateTime || (c.Op != MatchEq && c.Op != MatchGte && c.Op != MatchLt) {
				k.plannable = false
			}
			b = append(appendMember(b, c.Field), matchCode(c.Op))
		}
		k.conds = string(b)
	}
	if op == planCount {
		return k
	}
	k.proj, k.fields = projectionOf(r, q.Fields)
	if len(q.Sort) > 0 {
		b := make([]byte, 0, 3*len(q.Sort))
		for _, t := range q.Sort {
			desc := byte(0)
			if t.Desc {
				desc = 1
			}
			b = append(appendMember(b, t.Field), desc)
		}
		k.sort = string(b)
	}
	k.take, k.page, k.peek, k.zone = q.Take, q.Page, q.peek, q.zone
	if q.After != nil {
		b := make([]byte, len(q.After))
		for i, v := range q.After {
			b[i] = 'v'
			if v == nil {
				b[i] = 'n'
			}
		}
		k.after = string(b)
	}
	return k
}

// insertPlan is the key of a single-row insert into r.
func insertPlan(r *Resource) planKey {
	return planKey{op: planInsert, resource: r.Name, plannable: true}
}

// projectionOf encodes fields: projOutput when they are r.Output itself (most shapes, and
// long), else the list.
func projectionOf(r *Resource, fields []*Field) (projection, string) {
	if len(fields) > 0 && len(fields) == len(r.Output) && &fields[0] == &r.Output[0] {
		return projOutput, ""
	}
	b := make([]byte, 0, 2*len(fields))
	for _, f := range fields {
		b = appendMember(b, f)
	}
	return projListed, string(b)
}

// planValues lists the values of a count or list of q in the order the builder binds them:
// conditions, the organization, then the position's values that are not NULL.
func planValues(q Query) []any {
	vals := make([]any, 0, len(q.Conds)+1+len(q.After))
	for _, c := range q.Conds {
		vals = append(vals, c.Value)
	}
	if q.org != "" {
		vals = append(vals, q.org)
	}
	for _, v := range q.After {
		if v != nil {
			vals = append(vals, v)
		}
	}
	return vals
}

// keyValues lists the values of a statement on the record with key: the key, then the
// organization.
func keyValues(key []any, org string) []any {
	vals := make([]any, len(key), len(key)+1)
	copy(vals, key)
	if org != "" {
		vals = append(vals, org)
	}
	return vals
}

// arity is how many values a statement of k on r binds.
func (k planKey) arity(r *Resource) int {
	n := 0
	switch k.op {
	case planInsert:
		return len(r.Fields)
	case planGet, planExists, planLock:
		n = len(r.Key)
	default:
		n = len(k.conds)/3 + strings.Count(k.after, "v")
	}
	if k.scoped {
		n++
	}
	return n
}

// build is the statement builder: the statement k describes with vals bound, on tx (a dry
// run, to make a plan from sentinel values, or a session with the request's context, to run
// it). It reads nothing but k, vals and the store's table names and dialect. An insert's
// statement still needs its columns: finish adds them.
func (s *Store) build(tx *gorm.DB, k planKey, vals []any) (*gorm.DB, *Resource) {
	r := s.reg.MustByName(k.resource)
	if k.op == planInsert {
		return tx.Table(s.TableName(r)).Clauses(onKeyConflict(r)), r
	}
	tx = tx.Table(s.Table(r) + " AS " + alias)
	switch k.proj {
	case projOutput:
		tx = tx.Select(s.selectExpr(r, r.Output))
	case projStored:
		tx = tx.Select(s.selectExpr(r, r.Fields))
	case projListed:
		fields := make([]*Field, 0, len(k.fields)/2)
		for i := 0; i < len(k.fields); i += 2 {
			fields = append(fields, member(r, k.fields, i))
		}
		tx = tx.Select(s.selectExpr(r, fields))
	default:
		if k.op != planCount {
			tx = tx.Select("1")
		}
	}
	org := func(i int) string {
		if !k.scoped {
			return ""
		}
		o, _ := vals[i].(string)
		return o
	}
	switch k.op {
	case planGet, planExists, planLock:
		n := len(r.Key)
		tx = whereKey(s.scope(tx, r, org(n)), r, vals[:n]).Limit(1)
		if k.op == planLock && s.dialect == Postgres {
			tx = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate, Table: clause.Table{Name: alias}})
		}
		return tx, r
	}
	n := len(k.conds) / 3
	for i := range n {
		f, op := member(r, k.conds, 3*i), matchCodes[k.conds[3*i+2]]
		if f.Stored() {
			tx = tx.Where(s.cond(alias, f, op, vals[i]))
		} else {
			tx = tx.Where(s.linkCond(f.Computed, op, vals[i]))
		}
	}
	tx = s.scope(tx, r, org(n))
	if k.op == planCount {
		return tx, r
	}
	if k.scoped {
		n++
	}
	terms := make([]SortTerm, 0, len(k.sort)/3)
	for i := 0; i < len(k.sort); i += 3 {
		terms = append(terms, SortTerm{Field: member(r, k.sort, i), Desc: k.sort[i+2] == 1})
	}
	// From the position by keyset when there is one, else at the page by offset.
	switch ordered := r.OrderTerms(terms); {
	case k.zone == zoneNulls:
		tx = tx.Where(clause.Eq{Column: col(alias, ordered[0].Field.Column), Value: nil})
	case k.after != "":
		after := make(Cursor, len(k.after))
		for i := range k.after {
			if k.after[i] == 'v' {
				after[i] = vals[n]
				n++
			}
		}
		tx = tx.Where(s.seek(ordered, after, k.zone == zoneValues))
	}
	tx = order(tx, r, terms)
	if k.take > 0 || k.peek {
		limit := k.take
		if k.peek {
			limit++
		}
		tx = tx.Limit(limit)
		if k.after == "" && k.page > 1 {
			tx = tx.Offset((k.page - 1) * k.take)
		}
	}
	return tx, r
}

// dryRun returns the statement k builds with vals, without running it.
func (s *Store) dryRun(k planKey, vals []any) *gorm.Statement {
	tx, r := s.build(s.db.Session(&gorm.Session{DryRun: true}), k, vals)
	switch k.op {
	case planCount:
		var n int64
		tx = tx.Count(&n)
	case planInsert:
		tx = tx.Create(insertColumns(r, vals))
	default:
		tx = tx.Find(&[]map[string]any{})
	}
	return tx.Statement
}

// insertColumns maps the values of an insert (r.Fields' in order) to their columns.
func insertColumns(r *Resource, vals []any) map[string]any {
	cols := make(map[string]any, len(r.Fields))
	for i, f := range r.Fields {
		cols[f.Column] = storageValue(vals[i])
	}
	return cols
}
