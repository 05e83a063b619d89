package engine

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Registry is the immutable set of compiled resources, shared by every partition.
type Registry struct {
	resources []*Resource
	byName    map[string]*Resource
	byPath    map[string]*Resource
}

// Resources returns every resource in load order (sorted by file name).
func (g *Registry) Resources() []*Resource { return g.resources }

// Public returns the resources the API routes, sorted by path.
func (g *Registry) Public() []*Resource {
	var out []*Resource
	for _, r := range g.resources {
		if !r.Internal() {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// ByName returns the resource with this record name (as `credo load --resource` takes it);
// the API path and the table name are accepted too.
func (g *Registry) ByName(name string) (*Resource, bool) {
	if r, ok := g.byName[name]; ok {
		return r, true
	}
	if r, ok := g.byPath[name]; ok {
		return r, true
	}
	for _, r := range g.resources {
		if r.Table == name {
			return r, true
		}
	}
	return nil, false
}

// MustByName is ByName for names the program itself relies on; it panics when missing.
func (g *Registry) MustByName(name string) *Resource {
	r, ok := g.ByName(name)
	if !ok {
		panic("engine: no resource " + name)
	}
	return r
}

// Load reads every *.yaml file below each root of each file system, strictly, and compiles
// them into a Registry. Any problem stops loading with an error naming the file and line.
func Load(fsys ...fs.FS) (*Registry, error) {
	type source struct {
		file string
		data []byte
	}
	var sources []source
	for _, f := range fsys {
		err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || path.Ext(p) != ".yaml" {
				return nil
			}
			data, err := fs.ReadFile(f, p)
			if err != nil {
				return err
			}
			sources = append(sources, source{file: p, data: data})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("engine: read descriptors: %w", err)
		}
	}
	sort.SliceStable(sources, func(i, j int) bool { return sources[i].file < sources[j].file })

	var docs []*parsed
	for _, s := range sources {
		p, err := parse(s.file, s.data)
		if err != nil {
			return nil, err
		}
		docs = append(docs, p)
	}
	return compile(docs)
}

// parsed is a strictly decoded descriptor with its YAML tree, kept to report line numbers.
type parsed struct {
	file string
	d    Descriptor
	root *yaml.Node
}

func parse(file string, data []byte) (*parsed, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	p := &parsed{file: file}
	if err := dec.Decode(&p.d); err != nil {
		if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("descriptor %s:%s: %s", file, m[1], m[2])
		}
		return nil, fmt.Errorf("descriptor %s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("descriptor %s: %w", file, err)
	}
	p.root = &root
	return p, nil
}

// errAt reports a problem at the first line where the scalar value appears (the key otherwise).
func (p *parsed) errAt(value, format string, args ...any) error {
	line := findLine(p.root, value)
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		return fmt.Errorf("descriptor %s:%d: %s", p.file, line, msg)
	}
	return fmt.Errorf("descriptor %s: %s", p.file, msg)
}

func findLine(n *yaml.Node, value string) int {
	if n == nil || value == "" {
		return 0
	}
	if n.Kind == yaml.ScalarNode && n.Value == value {
		return n.Line
	}
	for _, c := range n.Content {
		if l := findLine(c, value); l > 0 {
			return l
		}
	}
	return 0
}

var (
	// yamlLineRe picks the first "line N: message" of a yaml.v3 error.
	yamlLineRe = regexp.MustCompile(`line (\d+): ([^\n]*)`)
	identRe    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	nameRe     = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	pathRe     = regexp.MustCompile(`^[a-z]+(/[a-z][a-z-]*)+$`)
	hookNameRe = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
)

func compile(docs []*parsed) (*Registry, error) {
	g := &Registry{byName: map[string]*Resource{}, byPath: map[string]*Resource{}}
	tables := map[string]string{}
	// Pass 1: stored fields, so that links between descriptors can resolve in pass 2.
	for _, p := range docs {
		r, err := compileFields(p)
		if err != nil {
			return nil, err
		}
		if other, dup := g.byName[r.Name]; dup {
			return nil, p.errAt(r.Name, "name %s is also used by %s", r.Name, other.File)
		}
		if r.Path != "" {
			if other, dup := g.byPath[r.Path]; dup {
				return nil, p.errAt(r.Path, "path %s is also used by %s", r.Path, other.File)
			}
			g.byPath[r.Path] = r
		}
		if other, dup := tables[r.Table]; dup {
			return nil, p.errAt(r.Table, "table %s is also used by %s", r.Table, other)
		}
		tables[r.Table] = p.file
		if r.Content != "" {
			if other, dup := tables[r.Content]; dup {
				return nil, p.errAt(r.Content, "content table %s is also used by %s", r.Content, other)
			}
			tables[r.Content] = p.file
		}
		g.byName[r.Name] = r
		g.resources = append(g.resources, r)
	}
	// Pass 2: everything that refers to members or to other descriptors.
	for i, p := range docs {
		if err := compileRest(p, g.resources[i], g); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func compileFields(p *parsed) (*Resource, error) {
	d := p.d
	r := &Resource{Name: d.Name, Path: d.Path, Table: d.Table, Summary: d.Summary, File: p.file, Credentials: d.Credentials,
		ops: map[Op]bool{}, byName: map[string]*Field{}, filterByKey: map[string]*Filter{}}
	switch {
	case !nameRe.MatchString(d.Name):
		return nil, p.errAt(d.Name, "name %q must be PascalCase letters and digits", d.Name)
	case d.Path != "" && !pathRe.MatchString(d.Path):
		return nil, p.errAt(d.Path, "path %q must be lower-case segments like security/users", d.Path)
	case !identRe.MatchString(d.Table):
		return nil, p.errAt(d.Table, "table %q must be a lower-case SQL identifier", d.Table)
	case len(d.Fields) == 0:
		return nil, p.errAt("fields", "a descriptor needs fields")
	}
	if d.MaxTake < 0 || d.MaxTake > 100000 {
		return nil, p.errAt("maxTake", "maxTake %d must be between 1 and 100000", d.MaxTake)
	}
	r.MaxTake = d.MaxTake
	if r.MaxTake == 0 {
		r.MaxTake = MaxTake
	}
	if d.Content != "" {
		switch {
		case !identRe.MatchString(d.Content):
			return nil, p.errAt(d.Content, "content %q must be a lower-case SQL identifier", d.Content)
		case d.Path != "":
			return nil, p.errAt(d.Content, "content is for internal tables only (no path): no operation serves it")
		}
		r.Content = d.Content
	}
	columns := map[string]string{}
	for _, fs := range d.Fields {
		f := &Field{Name: fs.Name, Column: fs.Column, Type: Type(fs.Type), Nullable: fs.Nullable,
			Required: fs.Required, ReadOnly: fs.ReadOnly, WriteOnly: fs.WriteOnly, Hash: Hash(fs.Hash),
			Default: fs.Default, Validate: fs.Validate, MaxLen: fs.MaxLength, Output: !fs.WriteOnly}
		if !nameRe.MatchString(f.Name) {
			return nil, p.errAt(f.Name, "field name %q must be PascalCase", f.Name)
		}
		if _, dup := r.byName[f.Name]; dup {
			return nil, p.errAt(f.Name, "field %s is declared twice", f.Name)
		}
		if err := checkType(p, f.Name, fs.Type); err != nil {
			return nil, err
		}
		if f.Column == "" {
			f.Column = snake(f.Name)
		}
		if !identRe.MatchString(f.Column) {
			return nil, p.errAt(f.Column, "column %q must be a lower-case SQL identifier", f.Column)
		}
		if other, dup := columns[f.Column]; dup {
			return nil, p.errAt(f.Name, "field %s maps to column %s, as %s does", f.Name, f.Column, other)
		}
		columns[f.Column] = f.Name
		switch fs.Match {
		case "", "exact":
			f.Match = MatchEq
		case "contains":
			if f.Type != TypeString {
				return nil, p.errAt(f.Name, "field %s: match contains needs a string field", f.Name)
			}
			f.Match = MatchContains
		default:
			return nil, p.errAt(fs.Match, "field %s: unknown match %q (exact, contains)", f.Name, fs.Match)
		}
		if f.MaxLen < 0 || f.MaxLen > 0 && f.Type != TypeString {
			return nil, p.errAt(f.Name, "field %s: maxLength applies to string fields only", f.Name)
		}
		if f.MaxLen == 0 {
			f.MaxLen = MaxStringLength
		}
		if f.Default != "" {
			if _, err := defaultValue(f); err != nil {
				return nil, p.errAt(f.Default, "field %s: default %q: %v", f.Name, f.Default, err)
			}
		}
		if f.Validate != "" {
			if err := checkValidateTag(f.Validate); err != nil {
				return nil, p.errAt(f.Validate, "field %s: validate %q: %v", f.Name, f.Validate, err)
			}
		}
		if err := checkWriteOnly(p, f, fs); err != nil {
			return nil, err
		}
		f.Index = len(r.Members)
		r.Members = append(r.Members, f)
		r.Fields = append(r.Fields, f)
		r.byName[f.Name] = f
		if f.Hash != "" {
			r.hashed = append(r.hashed, f)
		}
	}
	for _, k := range d.Key {
		f, ok := r.byName[k]
		if !ok {
			return nil, p.errAt(k, "key %s is not a field", k)
		}
		if f.Type != TypeUUID && f.Type != TypeString && f.Type != TypeInt {
			return nil, p.errAt(k, "key %s must be a uuid, string or int field", k)
		}
		if f.Nullable {
			return nil, p.errAt(k, "key %s cannot be nullable", k)
		}
		if f.WriteOnly {
			return nil, p.errAt(k, "key %s cannot be writeOnly", k)
		}
		f.Key = true
		r.Key = append(r.Key, f)
	}
	if len(r.Key) == 0 {
		return nil, p.errAt("key", "a descriptor needs a key")
	}
	for _, k := range r.Key {
		if r.Content != "" && contentColumns[k.Column] {
			return nil, p.errAt(k.Name, "key %s: column %s is taken by the content table", k.Name, k.Column)
		}
	}
	for _, o := range d.Operations {
		op := Op(o)
		switch op {
		case OpGet, OpExists, OpCreate, OpUpdate, OpDelete, OpCount, OpList, OpSearch:
		default:
			return nil, p.errAt(o, "unknown operation %q (get, exists, create, update, delete, count, list, search)", o)
		}
		r.ops[op] = true
		if op == OpUpdate {
			r.ops[OpPatch] = true
		}
	}
	if r.Path == "" && len(r.ops) > 0 {
		return nil, p.errAt("operations", "operations need a path (internal tables have none)")
	}
	if r.Path != "" && len(r.ops) == 0 {
		return nil, p.errAt(r.Path, "a descriptor with a path needs operations")
	}
	return r, nil
}

// checkWriteOnly checks the writeOnly and hash keys of a field. A hashed member is a
// write-only string; it takes no validate tag (a merge patch would validate the stored hash)
// and no default (a default would be stored unhashed).
func checkWriteOnly(p *parsed, f *Field, fs FieldSpec) error {
	switch {
	case f.WriteOnly && f.ReadOnly:
		return p.errAt(f.Name, "field %s cannot be both readOnly and writeOnly", f.Name)
	case f.WriteOnly && fs.Filter != nil && *fs.Filter:
		return p.errAt(f.Name, "field %s is writeOnly and cannot be a filter", f.Name)
	case f.Hash == "":
		return nil
	case f.Hash != HashArgon2id:
		return p.errAt(fs.Hash, "field %s: unknown hash %q (argon2id)", f.Name, fs.Hash)
	case !f.WriteOnly:
		return p.errAt(f.Name, "field %s: hash needs writeOnly: true", f.Name)
	case f.Type != TypeString:
		return p.errAt(f.Name, "field %s: hash applies to string fields only", f.Name)
	case f.Validate != "" || f.Default != "":
		return p.errAt(f.Name, "field %s: a hashed field takes no validate or default", f.Name)
	}
	return nil
}

// refuseWriteOnly reports a descriptor key (what) that names a write-only member: its value
// would leak through that use (a filter, sort, search member, index or lookup is an oracle).
func refuseWriteOnly(p *parsed, f *Field, what string) error {
	if f != nil && f.WriteOnly {
		return p.errAt(f.Name, "%s: %s is writeOnly", what, f.Name)
	}
	return nil
}

func checkType(p *parsed, name, t string) error {
	switch Type(t) {
	case TypeUUID, TypeString, TypeBool, TypeInt, TypeDateTime:
		return nil
	}
	return p.errAt(t, "member %s: unknown type %q (uuid, string, bool, int, datetime)", name, t)
}

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

func compileRest(p *parsed, r *Resource, g *Registry) error {
	d := p.d
	for _, fs := range d.Fields {
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
	for _, cs := range d.Computed {
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
	for _, f := range r.Members {
		if f.Output {
			r.Output = append(r.Output, f)
		}
	}
	// Per-field filters: every stored non-key field unless `filter: false`.
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
	terms, err := parseSortTerms(r, d.Sort)
	if err != nil {
		return p.errAt(strings.Join(d.Sort, ","), "sort: %v", err)
	}
	if len(terms) == 0 {
		for _, k := range r.Key {
			terms = append(terms, SortTerm{Field: k})
		}
	}
	r.DefaultSort = terms
	if len(d.Search) == 0 {
		r.SearchFields = r.Key
	}
	for _, name := range d.Search {
		f, ok := r.byName[name]
		if !ok {
			return p.errAt(name, "search member %q is not a member", name)
		}
		if err := refuseWriteOnly(p, f, "search"); err != nil {
			return err
		}
		r.SearchFields = append(r.SearchFields, f)
	}
	for _, s := range d.Scope {
		f, ok := r.byName[s.Field]
		if !ok || !f.Stored() || f.Type != TypeUUID || f.WriteOnly {
			return p.errAt(s.Field, "scope field %q is not a stored uuid field that is output", s.Field)
		}
		sc := ScopeCond{Field: f}
		if s.Via != nil {
			if s.Via.Local == "" {
				s.Via.Local = s.Field
			}
			if sc.Via, err = link(p, r, g, s.Via, true); err != nil {
				return err
			}
			if sc.Via.Field.Type != TypeUUID {
				return p.errAt(s.Via.Field, "scope via field must be a uuid")
			}
		}
		r.Scope = append(r.Scope, sc)
	}
	if r.Unique, err = fieldLists(p, r, d.Unique, "unique"); err != nil {
		return err
	}
	if r.Indexes, err = fieldLists(p, r, d.Indexes, "index"); err != nil {
		return err
	}
	for _, name := range d.Hooks.BeforeWrite {
		h, ok := hook(name, false)
		if !ok {
			return p.errAt(name, "unknown beforeWrite hook %q (%s)", name, hookNames(false))
		}
		if err := h.needs(p, name, r, g); err != nil {
			return err
		}
		r.beforeWrite = append(r.beforeWrite, h.BeforeWrite)
	}
	for _, name := range d.Hooks.Authorize {
		if !hookNameRe.MatchString(name) {
			return p.errAt(name, "authorize check %q must be lower-case words joined by hyphens", name)
		}
		r.Authorize = append(r.Authorize, name)
	}
	for _, name := range d.Hooks.AfterDelete {
		h, ok := hook(name, true)
		if !ok {
			return p.errAt(name, "unknown afterDelete hook %q (%s)", name, hookNames(true))
		}
		if err := h.needs(p, name, r, g); err != nil {
			return err
		}
		r.afterDelete = append(r.afterDelete, h.AfterDelete)
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

// parseSortTerms reads `Field`, `Field asc` or `Field desc` terms (case-insensitive direction).
func parseSortTerms(r *Resource, terms []string) ([]SortTerm, error) {
	var out []SortTerm
	for _, t := range terms {
		parts := strings.Fields(t)
		if len(parts) == 0 || len(parts) > 2 {
			return nil, fmt.Errorf("%q is not `Field` or `Field asc|desc`", t)
		}
		f, ok := r.byName[parts[0]]
		if ok && f.WriteOnly {
			return nil, fmt.Errorf("%s is write-only and cannot be sorted on", parts[0])
		}
		if !ok || !f.Stored() {
			return nil, fmt.Errorf("unknown sort field %q", parts[0])
		}
		term := SortTerm{Field: f}
		if len(parts) == 2 {
			switch strings.ToLower(parts[1]) {
			case "asc":
			case "desc":
				term.Desc = true
			default:
				return nil, fmt.Errorf("sort direction %q is not asc or desc", parts[1])
			}
		}
		out = append(out, term)
	}
	return out, nil
}
