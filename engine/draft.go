package engine

import (
	"fmt"
	"sort"
	"strings"
)

// Draft is a record to write and which of its members were given: what Create, Update,
// Patch and the bulk inserts take. A draft comes from a client's JSON body (DecodeDraft), a
// CSV row (CSVHeader.DecodeRow) or code that sets members by name (NewDraft and Set); the verbs fill
// what it omits (keys, the scope's organization, defaults, hooks) and validate it, completing
// it in place. A Draft is a small value (its members are shared, not copied); the zero Draft
// is no draft, which every verb refuses.
//
// A decoded draft carries the problems of the members that did not decode (Problems): every
// verb refuses such a draft, reporting them together with the problems it finds in the
// members that did (required, null, the nil UUID, validate rules, the organization, the key),
// so that one 400 names every problem of a body (see prepare).
type Draft struct {
	r     *Resource
	rec   Record
	given []bool
	// failed marks the members that were given but did not decode (nil: none); problems
	// holds what was wrong with them and with the body's other names (nil: nothing).
	failed   []bool
	problems *ValidationError
}

// NewDraft returns an empty draft of a record of r: no member given.
func (r *Resource) NewDraft() Draft {
	return Draft{r: r, rec: r.NewRecord(), given: make([]bool, len(r.Members))}
}

// Resource returns the resource the draft is a record of.
func (d Draft) Resource() *Resource { return d.r }

// Set gives member the value v (nil: null), a Go value of the member's type (string, int64,
// bool, DateTime). A name that is not a stored member of the resource is an error: code that
// builds a draft finds a misspelt member at once rather than having it dropped. So is a value
// of another Go type (an int is taken as int64): a string given for a datetime would be
// stored as it is and fail every later read of the record. A uuid is stored in its canonical
// lower-case form, as one parsed from a request is. The member's other rules (its text,
// maxLength, range, null, validate tag) are the verbs' to check, for every draft alike: a
// value that breaks one is a *ValidationError naming the member when the draft is written.
func (d *Draft) Set(member string, v any) error {
	f, ok := d.r.byName[member]
	if !ok || !f.Stored() {
		return fmt.Errorf("engine: %s has no stored member %s", d.r.Name, member)
	}
	v, err := f.goValue(v)
	if err != nil {
		return fmt.Errorf("engine: %s.%s: %w", d.r.Name, member, err)
	}
	d.rec[f.Index], d.given[f.Index] = v, true
	return nil
}

// goValue checks that v is a Go value of f's type, or nil, and returns it as the record holds it.
func (f *Field) goValue(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if n, ok := v.(int); ok && f.Type == TypeInt {
		return int64(n), nil
	}
	ok := false
	switch f.Type {
	case TypeUUID:
		if s, isString := v.(string); isString {
			return ParseUUID(s)
		}
	case TypeString:
		_, ok = v.(string)
	case TypeBool:
		_, ok = v.(bool)
	case TypeInt:
		_, ok = v.(int64)
	case TypeDateTime:
		_, ok = v.(DateTime)
	}
	if !ok {
		return nil, fmt.Errorf("a %s member takes %s, not %T", f.Type, goTypeOf[f.Type], v)
	}
	return v, nil
}

// goTypeOf names the Go type a record holds for each member type.
var goTypeOf = map[Type]string{TypeUUID: "a string", TypeString: "a string", TypeBool: "a bool",
	TypeInt: "an int64", TypeDateTime: "an engine.DateTime"}

// Problems returns the problems decoding found in the draft's members (a *ValidationError),
// nil when it found none. The verbs report them with every other problem of the draft's
// members; a caller that wants them before any verb runs asks here.
func (d Draft) Problems() error {
	if d.problems == nil {
		return nil
	}
	return d.problems
}

// fail records that the member named name (a stored field's index i, or -1 for a name that
// is no field) did not decode, with msg.
func (d *Draft) fail(i int, name, msg string) {
	if d.problems == nil {
		d.problems = &ValidationError{}
	}
	d.problems.Add(name, msg)
	if i >= 0 {
		if d.failed == nil {
			d.failed = make([]bool, len(d.given))
		}
		d.failed[i] = true
	}
}

// Record returns the draft's values as a record of its resource (not copied).
func (d Draft) Record() Record { return d.rec }

// Get returns the value of member in the draft (nil when not given or unknown).
func (d Draft) Get(member string) any { return d.rec.Get(d.r, member) }

// of checks that the draft is one of r's records: a draft of another resource is a
// programming error.
func (d Draft) of(r *Resource) error {
	if d.r == nil {
		return fmt.Errorf("engine: no draft of %s", r.Name)
	}
	if d.r != r {
		return fmt.Errorf("engine: a draft of %s given for %s", d.r.Name, r.Name)
	}
	return nil
}

// DecodeDraft reads a JSON object body (see DecodeObject) into a draft of r. Every member
// must be a member of the record (exact case); values must have the member's JSON type
// exactly (no quoted numbers). Computed and read-only members a client echoes back are
// checked and dropped. Its error is a body that is not one JSON object (a syntax error, an
// array, a string); a problem of a member (a wrong type, a text rule, a name given twice or
// that is no member) rides in the draft (Problems), which every verb refuses with the other
// problems of the members that did decode. A member that did not decode is not given.
func (r *Resource) DecodeDraft(data []byte) (Draft, error) { return r.decodeDraft(data, false) }

// DecodeFileDraft is DecodeDraft for the rows of the process's own files (`credo load`,
// seeding): read-only members are kept, not dropped, so that a file carries what the API
// sets from its caller (a permission's grantor, time and organization). Computed members are
// still checked and dropped, and a beforeWrite hook still derives its members.
func (r *Resource) DecodeFileDraft(data []byte) (Draft, error) { return r.decodeDraft(data, true) }

func (r *Resource) decodeDraft(data []byte, file bool) (Draft, error) {
	members, textProblems, err := DecodeObjectApart(data)
	if err != nil {
		return Draft{}, err
	}
	d := r.NewDraft()
	for _, m := range textProblems.Members() {
		i := -1
		if f, ok := r.byName[MemberOf(m)]; ok {
			i = f.Index
		}
		for _, msg := range textProblems.Fields[m] {
			d.fail(i, m, msg)
		}
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f, ok := r.byName[name]
		switch {
		case !ok && textProblems.Fields[ShownName(name)] == nil:
			d.fail(-1, ShownName(name), notMember(name, r))
			continue
		case !ok:
			continue // its text is the problem reported
		}
		if !f.Stored() || d.failed != nil && d.failed[f.Index] {
			continue // computed members are output only; a client may echo them back
		}
		v, err := f.parseJSON(members[name])
		if err != nil {
			d.fail(f.Index, name, fmt.Sprintf("%s %v", name, err))
			continue
		}
		if f.ReadOnly && !file {
			// Dropped, so complete never sees it: it is held to the member's rules here.
			if p := f.valueProblem(v); p != "" {
				d.fail(f.Index, name, name+" "+p)
			}
			continue
		}
		d.rec[f.Index], d.given[f.Index] = v, true
	}
	return d, nil
}

// MemberOf returns the member a problem's path is under: `Accommodations` for
// `Accommodations[0].Type`.
func MemberOf(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// DraftOf returns a draft of r with the given members set (see Set).
func (r *Resource) DraftOf(members map[string]any) (Draft, error) {
	d := r.NewDraft()
	for name, v := range members {
		if err := d.Set(name, v); err != nil {
			return Draft{}, err
		}
	}
	return d, nil
}
