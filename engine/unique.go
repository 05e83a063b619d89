package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// Unique is a compiled unique constraint: no two records hold equal values of Fields, each
// string member compared as Fold says. A string member's empty value (an omitted member) never
// collides (see skipsEmpty).
type Unique struct {
	Fields []*Field
	Fold   Fold
}

// Fold is how a unique constraint compares its string members.
type Fold string

// The comparisons of a unique constraint.
const (
	// FoldNone compares strings byte for byte.
	FoldNone Fold = ""
	// FoldASCII compares strings with the ASCII letters A–Z and a–z alike and every other
	// character exactly (É and é differ, as K and the KELVIN SIGN do): the rule that SQLite's
	// lower() and PostgreSQL's lower() on the "C" collation both keep, so that the index, the
	// engine's checks and a module's maps agree, whatever the database's locale.
	FoldASCII Fold = "ascii"
)

// Key returns the form of s that the comparison tells apart: s itself, or s with A–Z
// lowered.
func (fo Fold) Key(s string) string {
	if fo != FoldASCII {
		return s
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = lowerASCII(b[j])
			}
			return string(b)
		}
	}
	return s
}

// parseFold reads a descriptor's `fold`: exact (or omitted) or ascii.
func parseFold(s string) (Fold, bool) {
	switch s {
	case "", "exact":
		return FoldNone, true
	case "ascii":
		return FoldASCII, true
	}
	return FoldNone, false
}

// Fold returns how the unique constraints holding f compare its values: FoldASCII when one
// folds case, FoldNone otherwise (compile refuses a member in constraints of both kinds). A
// module that looks records up by such a member, or keeps them in a map by it, compares as the
// constraint does: MatchSame and Fold().Key.
func (f *Field) Fold() Fold { return f.fold }

// folds reports whether the constraint compares f, one of its fields, under a fold.
func (u Unique) folds(f *Field) bool { return u.Fold != FoldNone && f.Type == TypeString }

// uniqueIndexName names the index of a unique constraint: ux_<table>_<columns>, uxf_… for one
// that folds case. The two names differ so that a migration tells an index of the other
// comparison from its own (see Unique.replaces).
func uniqueIndexName(r *Resource, u Unique) string {
	if u.Fold != FoldNone {
		return indexName("uxf", r, u.Fields)
	}
	return indexName("ux", r, u.Fields)
}

// replaces is the name of the index the constraint had under the other comparison: a
// migration that creates the constraint's index drops that one, which it supersedes.
func (u Unique) replaces(r *Resource) string {
	if u.Fold != FoldNone {
		return indexName("ux", r, u.Fields)
	}
	return indexName("uxf", r, u.Fields)
}

// uniqueExpr renders the column of f as the constraint compares it, on the table aliased tbl
// ("" for none, as in DDL): the column, or its ASCII-folded lower-case. PostgreSQL's lower()
// folds by the collation of its argument, so it is given "C" (ASCII only) explicitly.
func (s *Store) uniqueExpr(tbl string, u Unique, f *Field) string {
	c := quote(f.Column)
	if tbl != "" {
		c = tbl + "." + c
	}
	if !u.folds(f) {
		return c
	}
	if s.dialect == Postgres {
		return "lower(" + c + ` COLLATE "C")`
	}
	return "lower(" + c + ")"
}

// compileUnique resolves the descriptor's unique constraints and gives their string members
// their fold.
func compileUnique(p *parsed, r *Resource) ([]Unique, error) {
	var out []Unique
	lists := make([][]string, len(p.d.Unique))
	for i, spec := range p.d.Unique {
		lists[i] = spec.Fields
	}
	sets, err := fieldLists(p, r, lists, "unique")
	if err != nil {
		return nil, err
	}
	folded := map[*Field]Fold{}
	for i, spec := range p.d.Unique {
		at := []any{"unique", i}
		fold, ok := parseFold(spec.Fold)
		if !ok {
			return nil, p.errIn(at, "unique: unknown fold %q (exact, ascii)", spec.Fold)
		}
		u := Unique{Fields: sets[i], Fold: fold}
		for _, o := range out {
			if sameFields(o.Fields, u.Fields) {
				return nil, p.errIn(at, "unique (%s) is declared twice", strings.Join(spec.Fields, ", "))
			}
		}
		strs := 0
		for _, f := range u.Fields {
			if f.Type != TypeString {
				continue
			}
			strs++
			if fold != FoldNone && f.Key {
				return nil, p.errIn(at, "unique: %s is a key field, which compares exactly: it cannot be in a constraint with fold %s", f.Name, fold)
			}
			if have, seen := folded[f]; seen && have != fold {
				return nil, p.errIn(at, "unique: %s is in a constraint with fold %s and in one without: its values must compare one way", f.Name, max(fold, have))
			}
			folded[f] = fold
		}
		if fold != FoldNone && strs == 0 {
			return nil, p.errIn(at, "unique (%s): fold %s needs a string field", strings.Join(spec.Fields, ", "), fold)
		}
		if err := refuseSameWhenOmitted(p, r, u, at); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	for f, fold := range folded {
		f.fold = fold
	}
	return out, nil
}

// refuseSameWhenOmitted refuses a constraint every member of which a write may omit and then
// stores with the same value (see omittedValue): only one record could omit them all, and the
// next would be a conflict over values nobody sent. With one member given by every write (a
// required member, a default of new) it is the constraint's own choice: a record that omits
// the others is one per value of that member (a user field without an organization).
func refuseSameWhenOmitted(p *parsed, r *Resource, u Unique, at []any) error {
	var names, values []string
	defaults := false
	for _, f := range u.Fields {
		v, ok := omittedValue(r, f)
		if !ok {
			return nil
		}
		names = append(names, f.Name)
		what := "its zero value"
		if f.Default != "" {
			defaults, what = true, "its default"
		}
		if s, ok := v.(string); ok {
			v = strconv.Quote(s)
		}
		values = append(values, fmt.Sprintf("%v (%s)", v, what))
	}
	subject, it, fix := names[0], "it", "make "+names[0]+" required, or nullable"
	if len(names) > 1 {
		subject, it, fix = strings.Join(names, " and "), "them", "make one of them required, or nullable"
	}
	if defaults {
		fix += " without a default"
	}
	return p.errIn(at, "unique %s: a record that omits %s stores %s as %s, so only one record could omit %s; %s (a null never collides)",
		u.describe(), subject, it, strings.Join(values, " and "), it, fix)
}

// omittedValue returns the value that every write omitting f stores, when a unique
// constraint compares it: f's zero value (decisions §4) or a literal default. It reports
// false when no write omits f (required, or a key without a default), when the server sets it
// (a read-only member, which a hook or write check derives; the organization of a directly
// scoped record, which the caller's organization fills), when it differs per record (a default
// of new or now), or when the constraint leaves it out (null, or an empty string: skipsEmpty).
func omittedValue(r *Resource, f *Field) (any, bool) {
	switch {
	case f.Required || f.ReadOnly, f.Key && f.Default == "", scopedBy(r, f):
		return nil, false
	case f.Default == "now" && f.Type == TypeDateTime, f.Default == "new" && f.Type == TypeUUID:
		return nil, false
	}
	v, err := defaultValue(f)
	if err != nil || v == nil || v == "" && skipsEmpty(f) {
		return nil, false
	}
	return v, true
}

// scopedBy reports whether f is the organization of a directly scoped r (see claimScope).
func scopedBy(r *Resource, f *Field) bool {
	for _, sc := range r.Scope {
		if sc.Field == f && sc.Via == nil && sc.Any == nil {
			return true
		}
	}
	return false
}

// fieldsOf lists the fields of each constraint.
func fieldsOf(us []Unique) [][]*Field {
	out := make([][]*Field, len(us))
	for i, u := range us {
		out[i] = u.Fields
	}
	return out
}

// describe renders the constraint for messages: "(Email)", "(Email, ignoring ASCII case)".
func (u Unique) describe() string {
	names := make([]string, len(u.Fields))
	for i, f := range u.Fields {
		names[i] = f.Name
	}
	s := strings.Join(names, ", ")
	if u.Fold == FoldASCII {
		s += ", ignoring ASCII case"
	}
	return fmt.Sprintf("(%s)", s)
}
