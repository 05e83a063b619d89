package engine

import (
	"strings"
	"sync"
)

// Type is the closed set of field types a descriptor may use.
type Type string

// The field types of api.md: uuid and datetime are strings on the wire.
const (
	TypeUUID     Type = "uuid"
	TypeString   Type = "string"
	TypeBool     Type = "bool"
	TypeInt      Type = "int"
	TypeDateTime Type = "datetime"
)

// Op is a standard operation of a record group.
type Op string

// The standard operations; OpPatch is offered wherever OpUpdate is.
const (
	OpGet    Op = "get"
	OpExists Op = "exists"
	OpCreate Op = "create"
	OpUpdate Op = "update"
	OpPatch  Op = "patch"
	OpDelete Op = "delete"
	OpCount  Op = "count"
	OpList   Op = "list"
	OpSearch Op = "search"
)

// AllOps lists the standard operations in documentation order.
var AllOps = []Op{OpGet, OpExists, OpUpdate, OpPatch, OpDelete, OpCreate, OpCount, OpList, OpSearch}

// MatchOp is how a filter compares its value.
type MatchOp string

// Filter comparisons: equality, case-insensitive substring, inclusive lower and exclusive upper bound.
const (
	MatchEq       MatchOp = "eq"
	MatchContains MatchOp = "contains"
	MatchGte      MatchOp = "gte"
	MatchLt       MatchOp = "lt"
	// MatchIn takes a []any or []string of values; modules use it for batched lookups
	// (descriptors cannot name it).
	MatchIn MatchOp = "in"
	// MatchSame is MatchIn by identity: a string value matches as the field's unique
	// constraints compare it (Field.Fold: ASCII case ignored when they fold it), on the
	// expression their index holds, and an empty string matches nothing (it is an omitted
	// member, which no constraint covers). Modules use it to find a record by the member that
	// identifies it, such as a user by Email (descriptors cannot name it).
	MatchSame MatchOp = "same"
)

// Limits of the standard operations.
const (
	// DefaultTake is the page size when Take is not given.
	DefaultTake = 20
	// MaxTake is the largest Take unless a descriptor sets maxTake.
	MaxTake = 1000
	// MaxStringLength caps string members unless a descriptor sets maxLength.
	MaxStringLength = 4000
)

// Field is a compiled member: stored (Computed nil) or derived in SQL.
type Field struct {
	Name     string
	Column   string
	Type     Type
	Nullable bool
	Required bool
	ReadOnly bool
	// WriteOnly members are accepted in bodies but never output, filtered or sorted.
	WriteOnly bool
	// Hash is how a write-only member is stored ("" stores the value as given).
	Hash     Hash
	Default  string
	Match    MatchOp
	Validate string
	MaxLen   int
	// Index is the field's position in Resource.Members.
	Index int
	// Key is true for the fields of the record key.
	Key bool
	// Output is true when the member is part of the record returned by get and list.
	Output   bool
	Computed *Computed
	// References is the resource whose key the member's values name (descriptor
	// `references`), checked by bulk loads; nil when none is declared.
	References *Resource
	// fold is how the member's unique constraints compare it (see Field.Fold).
	fold Fold
}

// Stored reports whether the member is a column of the resource's own table.
func (f *Field) Stored() bool { return f.Computed == nil }

// Computed is a member derived by a correlated subquery on another resource.
type Computed struct {
	Count  bool
	From   *Resource
	Local  *Field
	Remote *Field
	Field  *Field // nil for counts
}

// Filter is a compiled filter parameter.
type Filter struct {
	Param string
	Field *Field
	Op    MatchOp
}

// SortTerm orders by one stored field.
type SortTerm struct {
	Field *Field
	Desc  bool
}

// ScopeCond is one organization condition (see ScopeSpec): Field equals the organization, or
// with Via is among the organization's Via records; or, with Any (Field and Via nil), the
// Local of one of the links is among its organization's records.
type ScopeCond struct {
	Field *Field
	Via   *Computed
	Any   []*Computed
}

// Resource is a compiled, immutable descriptor: everything the engine and handlers need to
// serve one record group.
type Resource struct {
	Name    string
	Path    string
	Table   string
	Summary string
	File    string

	// Members are the stored fields in descriptor order, then the computed members.
	Members []*Field
	// Fields are the stored members only.
	Fields []*Field
	// Output are the members of the full record (get and list).
	Output []*Field
	// SearchFields are the members of the reduced search record.
	SearchFields []*Field
	Key          []*Field
	Filters      []*Filter
	DefaultSort  []SortTerm
	Scope        []ScopeCond
	Unique       []Unique
	Indexes      [][]*Field
	MaxTake      int
	// Credentials marks a table of credentials or their state, which bulk loads refuse.
	Credentials bool
	// Content is the table of the records' byte streams (see Descriptor.Content); empty when
	// the records have none.
	Content string

	// Authorize names the write checks the server's authorizer must supply (see WriteCheck).
	Authorize []string

	ops         map[Op]bool
	byName      map[string]*Field
	filterByKey map[string]*Filter
	// beforeWrite are the beforeWrite hooks, each with the members it declares, and
	// derivedFrom the members each member they set derives from (Hook.Derives); checks are
	// the members the write checks may set (the read-only ones): see serverSet.
	beforeWrite []boundHook
	derivedFrom map[*Field][]*Field
	checks      serverCode
	afterDelete []AfterDeleteHook
	// hashed are the stored members with a Hash.
	hashed []*Field
	// storedOutput is true when every member of Output is stored: a record just written, or
	// read with its Fields, holds the full record (no computed member to read back).
	storedOutput bool
	// outputScanners keeps the scanners of single-record reads of Output (see scanOne).
	outputScanners sync.Pool
}

// Offers reports whether the API offers op for this resource.
func (r *Resource) Offers(op Op) bool { return r.ops[op] }

// Ops lists the offered operations in documentation order.
func (r *Resource) Ops() []Op {
	var out []Op
	for _, op := range AllOps {
		if r.ops[op] {
			out = append(out, op)
		}
	}
	return out
}

// Internal reports whether the resource has no API routes (a table other modules use).
func (r *Resource) Internal() bool { return r.Path == "" }

// Member returns the member with this exact name.
func (r *Resource) Member(name string) (*Field, bool) {
	f, ok := r.byName[name]
	return f, ok
}

// Filter returns the filter parameter with this exact name.
func (r *Resource) Filter(param string) (*Filter, bool) {
	f, ok := r.filterByKey[param]
	return f, ok
}

// Scoped reports whether the resource is limited to the caller's organization.
func (r *Resource) Scoped() bool { return len(r.Scope) > 0 }

// snake turns a PascalCase member name into a snake_case column name.
func snake(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		upper := r >= 'A' && r <= 'Z'
		if upper && i > 0 {
			prevLower := rs[i-1] >= 'a' && rs[i-1] <= 'z' || rs[i-1] >= '0' && rs[i-1] <= '9'
			nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			if prevLower || (nextLower && rs[i-1] >= 'A' && rs[i-1] <= 'Z') {
				b.WriteByte('_')
			}
		}
		if upper {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
