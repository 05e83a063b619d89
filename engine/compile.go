package engine

// compile turns the parsed descriptors into a Registry in two passes of named steps:
// compileFields (each descriptor's own members), register (names, paths and tables unique
// across descriptors), then compileRest (what refers to members or other descriptors). The
// tables themselves are made later, when a Database opens (Store.Migrate).
func compile(docs []*parsed) (*Registry, error) {
	g := &Registry{byName: map[string]*Resource{}, byPath: map[string]*Resource{}}
	tables := map[string]string{}
	for _, p := range docs {
		r, err := compileFields(p)
		if err != nil {
			return nil, err
		}
		if err := g.register(p, r, tables); err != nil {
			return nil, err
		}
	}
	for i, p := range docs {
		if err := compileRest(p, g.resources[i], g); err != nil {
			return nil, err
		}
	}
	g.columns = requiredColumns(g.resources)
	return g, nil
}

// register adds r to g, refusing a name, path or table (tables: table → file) another
// descriptor already uses.
func (g *Registry) register(p *parsed, r *Resource, tables map[string]string) error {
	if other, dup := g.byName[r.Name]; dup {
		return p.errAt(r.Name, "name %s is also used by %s", r.Name, other.File)
	}
	if r.Path != "" {
		if other, dup := g.byPath[r.Path]; dup {
			return p.errAt(r.Path, "path %s is also used by %s", r.Path, other.File)
		}
		g.byPath[r.Path] = r
	}
	if other, dup := tables[r.Table]; dup {
		return p.errAt(r.Table, "table %s is also used by %s", r.Table, other)
	}
	tables[r.Table] = p.file
	if r.Content != "" {
		if other, dup := tables[r.Content]; dup {
			return p.errAt(r.Content, "content table %s is also used by %s", r.Content, other)
		}
		tables[r.Content] = p.file
	}
	g.byName[r.Name] = r
	g.resources = append(g.resources, r)
	return nil
}

// compileFields is pass 1 for one descriptor: its header, stored members, key and operations,
// everything that refers to nothing outside it.
func compileFields(p *parsed) (*Resource, error) {
	r, err := compileHeader(p)
	if err != nil {
		return nil, err
	}
	columns := map[string]string{}
	for _, fs := range p.d.Fields {
		f, err := compileField(p, r, fs, columns)
		if err != nil {
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
	if err := compileKey(p, r); err != nil {
		return nil, err
	}
	if err := compileOps(p, r); err != nil {
		return nil, err
	}
	return r, nil
}

// compileHeader checks the descriptor's name, path, table, page limit and content table.
func compileHeader(p *parsed) (*Resource, error) {
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
	return r, nil
}

// compileField checks one stored member of r; columns maps the columns taken so far to their
// members.
func compileField(p *parsed, r *Resource, fs FieldSpec, columns map[string]string) (*Field, error) {
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
	return f, nil
}

// compileKey resolves the key members.
func compileKey(p *parsed, r *Resource) error {
	for _, k := range p.d.Key {
		f, ok := r.byName[k]
		if !ok {
			return p.errAt(k, "key %s is not a field", k)
		}
		if f.Type != TypeUUID && f.Type != TypeString && f.Type != TypeInt {
			return p.errAt(k, "key %s must be a uuid, string or int field", k)
		}
		if f.Nullable {
			return p.errAt(k, "key %s cannot be nullable", k)
		}
		if f.WriteOnly {
			return p.errAt(k, "key %s cannot be writeOnly", k)
		}
		f.Key = true
		r.Key = append(r.Key, f)
	}
	if len(r.Key) == 0 {
		return p.errAt("key", "a descriptor needs a key")
	}
	for _, k := range r.Key {
		if r.Content != "" && contentColumns[k.Column] {
			return p.errAt(k.Name, "key %s: column %s is taken by the content table", k.Name, k.Column)
		}
	}
	return nil
}

// compileOps reads the operations offered; update brings patch.
func compileOps(p *parsed, r *Resource) error {
	for _, o := range p.d.Operations {
		op := Op(o)
		switch op {
		case OpGet, OpExists, OpCreate, OpUpdate, OpDelete, OpCount, OpList, OpSearch:
		default:
			return p.errAt(o, "unknown operation %q (get, exists, create, update, delete, count, list, search)", o)
		}
		r.ops[op] = true
		if op == OpUpdate {
			r.ops[OpPatch] = true
		}
	}
	if r.Path == "" && len(r.ops) > 0 {
		return p.errAt("operations", "operations need a path (internal tables have none)")
	}
	if r.Path != "" && len(r.ops) == 0 {
		return p.errAt(r.Path, "a descriptor with a path needs operations")
	}
	return nil
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
