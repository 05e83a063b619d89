package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// Exported for the engine_test package only.

// MigrationLock is the key of the advisory lock of a partition's migration (PostgreSQL).
func MigrationLock(partition string) int64 { return migrationLock(partition) }

// Given reports whether member was given.
func (d Draft) Given(member string) bool {
	f, ok := d.r.byName[member]
	return ok && d.given[f.Index]
}

// Derived reports whether a beforeWrite hook sets f from other members (Hook.Derives: a
// permission's mask, a group's slug), so that a value a file gives it is not what is stored.
func (r *Resource) Derived(f *Field) bool {
	_, ok := r.derivedFrom[f]
	return ok
}

// KeyNames returns the key member names.
func (r *Resource) KeyNames() []string {
	out := make([]string, len(r.Key))
	for i, k := range r.Key {
		out[i] = k.Name
	}
	return out
}

// ListSQL returns the SQL and bind values of a list query within scope, built by GORM without
// running it (golden tests).
func (s *Store) ListSQL(r *Resource, q Query, scope Scope) (string, []any) {
	st := s.ListStatement(r, q, scope)
	return st.SQL, st.Vars
}

// CountSQL returns the SQL and bind values of a count query within scope, built by GORM.
func (s *Store) CountSQL(r *Resource, q Query, scope Scope) (string, []any) {
	st := s.CountStatement(r, q, scope)
	return st.SQL, st.Vars
}

// InsertSQL returns the SQL of a single-row insert into r; "" when it has no plan.
func (s *Store) InsertSQL(r *Resource) string {
	if p := s.planned(insertPlan(r)); p != nil {
		return p.sql
	}
	return ""
}

// Statement is one statement built both ways: by GORM with its values (SQL, Vars), and from
// its plan (PlanSQL, PlanArgs: the plan's text and the arguments a run with the values binds).
// Planned is false when the statement's shape has no plan.
type Statement struct {
	SQL      string
	Vars     []any
	Planned  bool
	PlanSQL  string
	PlanArgs []any
}

func (s *Store) bothWays(k planKey, vals []any) Statement {
	stmt := s.dryRun(k, vals)
	st := Statement{SQL: stmt.SQL.String(), Vars: stmt.Vars}
	if p := s.planned(k); p != nil {
		st.Planned, st.PlanSQL, st.PlanArgs = true, p.sql, p.args(vals)
	}
	return st
}

// ListStatement builds the list statement of q within scope both ways.
func (s *Store) ListStatement(r *Resource, q Query, scope Scope) Statement {
	q.org = scope.orgFor(r)
	if q.After != nil && s.nullsFollow(r.OrderTerms(q.Sort)[0], q.After[0]) {
		q.zone = zoneValues // the first statement ListPage runs
	}
	return s.bothWays(queryPlan(planList, r, q), planValues(q))
}

// CountStatement builds the count statement of q within scope both ways.
func (s *Store) CountStatement(r *Resource, q Query, scope Scope) Statement {
	q.org = scope.orgFor(r)
	q.Fields, q.Sort, q.Take, q.Page = nil, nil, 0, 0
	return s.bothWays(queryPlan(planCount, r, q), planValues(q))
}

// KeyStatements builds the get, exists and lock statements of the record with key within
// scope both ways, by name.
func (s *Store) KeyStatements(r *Resource, key []any, scope Scope) map[string]Statement {
	org := scope.orgFor(r)
	return map[string]Statement{
		"get":    s.bothWays(keyPlan(planGet, r, r.Output, org), keyValues(key, org)),
		"exists": s.bothWays(keyPlan(planExists, r, nil, org), keyValues(key, org)),
		"lock":   s.bothWays(keyPlan(planLock, r, nil, org), keyValues(key, org)),
	}
}

// InsertStatement builds the insert of d's record into r both ways.
func (s *Store) InsertStatement(r *Resource, d Draft) Statement {
	vals := make([]any, len(r.Fields))
	for i, f := range r.Fields {
		vals[i] = d.rec[f.Index]
	}
	return s.bothWays(insertPlan(r), vals)
}

// SetBulkChunk makes bulk loads check and write n rows at a time until the test ends.
func SetBulkChunk(t testing.TB, n int) {
	old := bulkChunk
	bulkChunk = n
	t.Cleanup(func() { bulkChunk = old })
}

// FoldContainsSpec is the rule of contains filters spelled out (fold.go): some substring of
// h, on character boundaries, is strings.EqualFold to n.
func FoldContainsSpec(h, n string) bool {
	if n == "" {
		return true
	}
	for i := range h {
		for j := i; j <= len(h); j++ {
			if (j == len(h) || utf8.RuneStart(h[j])) && strings.EqualFold(h[i:j], n) {
				return true
			}
		}
	}
	return false
}

// FoldPairs returns pairs of a value and a filter: a few chosen ones, then count pairs of a
// value (up to 8 characters) and a filter (up to 3) drawn, always alike, from characters
// with unusual fold orbits and from LIKE's and regular expressions' metacharacters.
func FoldPairs(count int) [][2]string {
	out := [][2]string{{"İ", "i"}, {"ı", "I"}, {"\u212A", "k"}, {"ſ", "S"}, {"Straße", "SS"}, {"ẞ", "ß"},
		{"Σς", "σΣ"}, {"a%b", "%"}, {"a_b", "_"}, {`a\b`, `\`}, {"ab", "a%b"}, {"ab", "a_"}, {"ab", `a\b`}}
	alphabet := []rune("aAkKsSeEßẞéÉøØ\u212A\u017FΣσςµΜμǅǄǆİıiI \t%_\\.*?[]{}+(|$^1")
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(max int) string {
		var b strings.Builder
		for range rng.IntN(max + 1) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range count {
		out = append(out, [2]string{word(8), word(3)})
	}
	return out
}

// RunBeforeWrite runs r's beforeWrite hooks on rec and checks what they changed, as a write does.
func (r *Resource) RunBeforeWrite(rec Record) error { return r.runBeforeWrite(rec) }

// RunHooks runs r's beforeWrite hooks on rec and nothing else.
func (r *Resource) RunHooks(rec Record) error {
	for _, h := range r.beforeWrite {
		if err := h.run(r, rec); err != nil {
			return err
		}
	}
	return nil
}
