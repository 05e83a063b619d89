package engine

import (
	"fmt"
	"strings"
)

// link resolves a LinkSpec of r against g. needField says whether Field must be set.
func link(p *parsed, r *Resource, g *Registry, l *LinkSpec, needField bool) (*Computed, error) {
	from, ok := g.byName[l.From]
	if !ok {
		return nil, p.errAt(l.From, "unknown descriptor %q", l.From)
	}
	c := &Computed{From: from}
	if c.Local, ok = r.byName[l.Local]; !ok || !c.Local.Stored() {
		return nil, p.errAt(l.Local, "local %q is not a stored field of %s", l.Local, r.Name)
	}
	if c.Remote, ok = from.byName[l.Remote]; !ok {
		return nil, p.errAt(l.Remote, "remote %q is not a field of %s", l.Remote, from.Name)
	}
	if c.Remote.Type != c.Local.Type {
		return nil, p.errAt(l.Remote, "remote %s.%s is %s but local %s is %s", from.Name, l.Remote, c.Remote.Type, l.Local, c.Local.Type)
	}
	if needField {
		if c.Field, ok = from.byName[l.Field]; !ok {
			return nil, p.errAt(l.Field, "field %q is not a field of %s", l.Field, from.Name)
		}
		if err := refuseWriteOnly(p, c.Field, "link field"); err != nil {
			return nil, err
		}
	} else if l.Field != "" {
		return nil, p.errAt(l.Field, "a count takes no field")
	}
	return c, nil
}

// compileRest is pass 2 for one descriptor, in named steps: everything that refers to
// members or to other descriptors, which pass 1 has compiled.
func compileRest(p *parsed, r *Resource, g *Registry) error {
	steps := []func(*parsed, *Resource, *Registry) error{
		linkReferences, compileComputed, compileFilters, compileSort, compileSearch, compileScope,
		compileIndexes, attachHooks,
	}
	for _, step := range steps {
		if err := step(p, r, g); err != nil {
			return err
		}
	}
	return nil
}

// linkReferences resolves the members' references to other descriptors.
func linkReferences(p *parsed, r *Resource, g *Registry) error {
	for _, fs := range p.d.Fields {
		if fs.References == "" {
			continue
		}
		to, ok := g.byName[fs.References]
		if !ok {
			return p.errAt(fs.References, "references: unknown descriptor %q", fs.References)
		}
		f := r.byName[fs.Name]
		if len(to.Key) != 1 || to.Key[0].Type != f.Type {
			return p.errAt(fs.Name, "%s references %s, which must have a single key field of type %s", f.Name, to.Name, f.Type)
		}
		f.References = to
	}
	return nil
}

// compileComputed compiles the computed members (lookups and counts on other descriptors)
// and then the full record's members, Output.
func compileComputed(p *parsed, r *Resource, g *Registry) error {
	for _, cs := range p.d.Computed {
		if !nameRe.MatchString(cs.Name) {
			return p.errAt(cs.Name, "computed name %q must be PascalCase", cs.Name)
		}
		if _, dup := r.byName[cs.Name]; dup {
			return p.errAt(cs.Name, "member %s is declared twice", cs.Name)
		}
		if err := checkType(p, cs.Name, cs.Type); err != nil {
			return err
		}
		f := &Field{Name: cs.Name, Type: Type(cs.Type), Nullable: true, ReadOnly: true, Output: cs.Output, Match: MatchEq, MaxLen: MaxStringLength}
		var err error
		switch {
		case cs.Lookup != nil && cs.Count == nil:
			f.Computed, err = link(p, r, g, cs.Lookup, true)
			if err == nil && f.Computed.Field.Type != f.Type {
				err = p.errAt(cs.Name, "computed %s is %s but %s.%s is %s", cs.Name, f.Type, f.Computed.From.Name, f.Computed.Field.Name, f.Computed.Field.Type)
			}
		case cs.Count != nil && cs.Lookup == nil:
			f.Computed, err = link(p, r, g, cs.Count, false)
			if err == nil {
				f.Computed.Count = true
				f.Nullable = false
				if f.Type != TypeInt {
					err = p.errAt(cs.Name, "a count must have type int")
				}
			}
		default:
			err = p.errAt(cs.Name, "computed %s needs exactly one of lookup and count", cs.Name)
		}
		if err != nil {
			return err
		}
		f.Index = len(r.Members)
		r.Members = append(r.Members, f)
		r.byName[f.Name] = f
	}
	r.storedOutput = true
	for _, f := range r.Members {
		if f.Output {
			r.Output = append(r.Output, f)
			r.storedOutput = r.storedOutput && f.Stored()
		}
	}
	return nil
}

// compileFilters adds a filter for every stored non-key member unless `filter: false`, then
// the descriptor's own filters.
func compileFilters(p *parsed, r *Resource, _ *Registry) error {
	d := p.d
	for i, fs := range d.Fields {
		f := r.Fields[i]
		if f.Key {
			if fs.Filter != nil && *fs.Filter {
				return p.errAt(f.Name, "key field %s cannot be a filter: Identifier takes its place", f.Name)
			}
			continue
		}
		if fs.Filter != nil && !*fs.Filter || f.WriteOnly {
			continue
		}
		if err := r.addFilter(p, &Filter{Param: f.Name, Field: f, Op: f.Match}); err != nil {
			return err
		}
	}
	for _, fs := range d.Filters {
		f, ok := r.byName[fs.Field]
		if !ok {
			return p.errAt(fs.Field, "filter %s: %q is not a member", fs.Name, fs.Field)
		}
		if err := refuseWriteOnly(p, f, "filter "+fs.Name); err != nil {
			return err
		}
		op := MatchOp(fs.Op)
		switch op {
		case "":
			op = f.Match
		case MatchEq, MatchGte, MatchLt:
		case MatchContains:
			if f.Type != TypeString {
				return p.errAt(fs.Name, "filter %s: contains needs a string member", fs.Name)
			}
		default:
			return p.errAt(fs.Op, "filter %s: unknown op %q (eq, contains, gte, lt)", fs.Name, fs.Op)
		}
		if !nameRe.MatchString(fs.Name) {
			return p.errAt(fs.Name, "filter name %q must be PascalCase", fs.Name)
		}
		if err := r.addFilter(p, &Filter{Param: fs.Name, Field: f, Op: op}); err != nil {
			return err
		}
	}
	return nil
}

// compileSort reads the default sort; the key when none is given.
func compileSort(p *parsed, r *Resource, _ *Registry) error {
	terms, err := parseSortTerms(r, p.d.Sort)
	if err != nil {
		return p.errAt(strings.Join(p.d.Sort, ","), "sort: %v", err)
	}
	if len(terms) == 0 {
		for _, k := range r.Key {
			terms = append(terms, SortTerm{Field: k})
		}
	}
	r.DefaultSort = terms
	return nil
}

// compileSearch reads the members of the reduced search record; the key when none is given.
func compileSearch(p *parsed, r *Resource, _ *Registry) error {
	if len(p.d.Search) == 0 {
		r.SearchFields = r.Key
	}
	for _, name := range p.d.Search {
		f, ok := r.byName[name]
		if !ok {
			return p.errAt(name, "search member %q is not a member", name)
		}
		if err := refuseWriteOnly(p, f, "search"); err != nil {
			return err
		}
		r.SearchFields = append(r.SearchFields, f)
	}
	return nil
}

// compileScope resolves the organization conditions, directly or through another descriptor,
// and the entries of `any` (each through another descriptor).
func compileScope(p *parsed, r *Resource, g *Registry) error {
	for i, s := range p.d.Scope {
		if s.Any == nil {
			sc, err := scopeCond(p, r, g, s, "scope", i)
			if err != nil {
				return err
			}
			r.Scope = append(r.Scope, sc)
			continue
		}
		at := []any{"scope", i}
		switch {
		case s.Field != "" || s.Via != nil:
			return p.errIn(at, "a scope entry with any has no field or via of its own: each of its entries has them")
		case len(s.Any) < 2:
			return p.errIn(at, "scope any needs two entries or more (one is an ordinary scope entry)")
		}
		var sc ScopeCond
		for j, e := range s.Any {
			if e.Any != nil || e.Via == nil {
				return p.errIn(append(at, "any", j), "an entry of scope any is a field with via (no any of its own)")
			}
			c, err := scopeCond(p, r, g, e, append(at, "any", j)...)
			if err != nil {
				return err
			}
			sc.Any = append(sc.Any, c.Via)
		}
		r.Scope = append(r.Scope, sc)
	}
	return nil
}

// scopeCond compiles one scope entry with a field, at (see errIn) in the descriptor.
func scopeCond(p *parsed, r *Resource, g *Registry, s ScopeSpec, at ...any) (ScopeCond, error) {
	if s.Field == "" {
		return ScopeCond{}, p.errIn(at, "a scope entry needs a field (or any)")
	}
	f, ok := r.byName[s.Field]
	if !ok || !f.Stored() || f.Type != TypeUUID || f.WriteOnly {
		return ScopeCond{}, p.errAt(s.Field, "scope field %q is not a stored uuid field that is output", s.Field)
	}
	sc := ScopeCond{Field: f}
	if s.Via != nil {
		if s.Via.Local == "" {
			s.Via.Local = s.Field
		}
		var err error
		if sc.Via, err = link(p, r, g, s.Via, true); err != nil {
			return ScopeCond{}, err
		}
		if sc.Via.Field.Type != TypeUUID {
			return ScopeCond{}, p.errAt(s.Via.Field, "scope via field must be a uuid")
		}
	}
	return sc, nil
}

// compileIndexes resolves the unique constraints and the indexes.
func compileIndexes(p *parsed, r *Resource, _ *Registry) error {
	var err error
	if r.Unique, err = compileUnique(p, r); err != nil {
		return err
	}
	r.Indexes, err = fieldLists(p, r, p.d.Indexes, "index")
	return err
}

// attachHooks resolves the hooks the descriptor names, each checked for the members it needs
// (see RegisterHook), and the write checks the authorizer must supply.
func attachHooks(p *parsed, r *Resource, g *Registry) error {
	d := p.d
	for _, name := range d.Hooks.BeforeWrite {
		h, ok := hook(name, false)
		if !ok {
			return p.errAt(name, "unknown beforeWrite hook %q (%s)", name, hookNames(false))
		}
		if _, err := h.needs(p, name, r, g); err != nil {
			return err
		}
		r.addBeforeWrite(h)
	}
	for _, name := range d.Hooks.Authorize {
		if !hookNameRe.MatchString(name) {
			return p.errAt(name, "authorize check %q must be lower-case words joined by hyphens", name)
		}
		r.Authorize = append(r.Authorize, name)
	}
	r.addWriteChecks()
	for _, name := range d.Hooks.AfterDelete {
		h, ok := hook(name, true)
		if !ok {
			return p.errAt(name, "unknown afterDelete hook %q (%s)", name, hookNames(true))
		}
		uses, err := h.needs(p, name, r, g)
		if err != nil {
			return err
		}
		r.afterDelete = append(r.afterDelete, h.AfterDelete(uses))
	}
	return nil
}

func (r *Resource) addFilter(p *parsed, f *Filter) error {
	if f.Param == "Identifier" || strings.HasPrefix(f.Param, "Origin") || strings.HasPrefix(f.Param, "Filter") {
		return p.errAt(f.Param, "filter %s collides with a common parameter", f.Param)
	}
	if _, dup := r.filterByKey[f.Param]; dup {
		return p.errAt(f.Param, "filter %s is declared twice", f.Param)
	}
	r.filterByKey[f.Param] = f
	r.Filters = append(r.Filters, f)
	return nil
}

func fieldLists(p *parsed, r *Resource, lists [][]string, what string) ([][]*Field, error) {
	var out [][]*Field
	for _, l := range lists {
		if len(l) == 0 {
			return nil, p.errAt(what, "empty %s", what)
		}
		var fs []*Field
		for _, name := range l {
			f, ok := r.byName[name]
			if !ok || !f.Stored() {
				return nil, p.errAt(name, "%s: %q is not a stored field", what, name)
			}
			if err := refuseWriteOnly(p, f, what); err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		out = append(out, fs)
	}
	return out, nil
}

// parseSortTerms reads `Field`, `Field asc` or `Field desc` terms (case-insensitive direction),
// each field once: a field's second term could never order anything.
func parseSortTerms(r *Resource, terms []string) ([]SortTerm, error) {
	var out []SortTerm
	seen := map[*Field]bool{}
	for _, t := range terms {
		parts := strings.Fields(t)
		if len(parts) == 0 || len(parts) > 2 {
			return nil, fmt.Errorf("%s is not `Field` or `Field asc|desc`", Quoted(t))
		}
		f, ok := r.byName[parts[0]]
		if ok && f.WriteOnly {
			return nil, fmt.Errorf("%s is write-only and cannot be sorted on", parts[0])
		}
		if !ok || !f.Stored() {
			return nil, fmt.Errorf("unknown sort field %s", Quoted(parts[0]))
		}
		if seen[f] {
			return nil, fmt.Errorf("%s is sorted on twice; name each field once", f.Name)
		}
		seen[f] = true
		term := SortTerm{Field: f}
		if len(parts) == 2 {
			switch strings.ToLower(parts[1]) {
			case "asc":
			case "desc":
				term.Desc = true
			default:
				return nil, fmt.Errorf("sort direction %s is not asc or desc", Quoted(parts[1]))
			}
		}
		out = append(out, term)
	}
	return out, nil
}
