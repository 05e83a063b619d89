package engine

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Descriptor is the YAML form of one record group or internal table, exactly as written in
// resources/. It is decoded strictly (unknown keys are errors) and then compiled into a Resource;
// docs/descriptors.md documents every key.
type Descriptor struct {
	// Name is the record name (OpenAPI schema name and `credo load --resource` name), e.g. UserComment.
	Name string `yaml:"name"`
	// Path is the route under /v2/{partition}/, e.g. security/users-comments. Empty for internal tables.
	Path string `yaml:"path"`
	// Table is the SQL table name: lower-case letters, digits and underscores.
	Table string `yaml:"table"`
	// Summary is one sentence used in OpenAPI and security/settings/endpoints.
	Summary string `yaml:"summary"`
	// Operations are the standard operations the API offers: get, exists, create, update,
	// delete, count, list, search. update also offers PATCH.
	Operations []string `yaml:"operations"`
	// Key names the field(s) that identify a record; the path carries one segment per key field.
	Key []string `yaml:"key"`
	// Fields are the stored members of the record, in output order.
	Fields []FieldSpec `yaml:"fields"`
	// Computed are members derived in SQL from other tables (lookups and counts).
	Computed []ComputedSpec `yaml:"computed"`
	// Filters are extra query parameters beyond the per-field ones (ranges, filters on computed members).
	Filters []FilterSpec `yaml:"filters"`
	// Sort is the default order: `Field` or `Field desc`. The key is always appended.
	Sort []string `yaml:"sort"`
	// Search lists the members of the reduced search record; default: the key.
	Search []string `yaml:"search"`
	// Scope limits a non-operator caller to its organization: every entry is one WHERE
	// condition, and all must hold.
	Scope []ScopeSpec `yaml:"scope"`
	// Unique lists unique constraints, each a list of fields or a UniqueSpec mapping.
	Unique []UniqueSpec `yaml:"unique"`
	// Indexes lists extra composite indexes; single-field indexes for filters, sort and scope are implied.
	Indexes [][]string `yaml:"indexes"`
	// MaxTake caps Take for this group; default MaxTake.
	MaxTake int `yaml:"maxTake"`
	// Hooks name hand-written Go behaviour registered in the engine.
	Hooks HookSpec `yaml:"hooks"`
	// Credentials marks a table of credentials or their state (signing keys, client secrets,
	// issued and revoked tokens): only credo itself writes it, and `credo load` refuses it.
	Credentials bool `yaml:"credentials"`
	// Content names a table holding a byte stream per record (a file), in chunks keyed by the
	// record's key: written before the record exists, deleted with it. Internal tables only.
	Content string `yaml:"content"`
}

// FieldSpec is one stored member.
type FieldSpec struct {
	Name string `yaml:"name"`
	// Type is one of uuid, string, bool, int, datetime.
	Type string `yaml:"type"`
	// Column overrides the SQL column name (default: the snake_case of Name).
	Column string `yaml:"column"`
	// Nullable lets clients send null and lets the value be null.
	Nullable bool `yaml:"nullable"`
	// Required makes a create or update without this member a 400.
	Required bool `yaml:"required"`
	// Default fills an omitted member: `now` (datetime), `new` (uuid) or a literal of the type.
	Default string `yaml:"default"`
	// Match is exact (default) or contains (case-insensitive substring) for string filters.
	Match string `yaml:"match"`
	// Filter false removes the per-field filter parameter (key fields never have one).
	Filter *bool `yaml:"filter"`
	// Validate is a go-playground/validator tag applied to non-null values, e.g. `email`.
	Validate string `yaml:"validate"`
	// MaxLength caps a string's length in characters (default MaxStringLength).
	MaxLength int `yaml:"maxLength"`
	// ReadOnly members are output only over the API: a body may carry them but its value
	// is ignored; a beforeWrite hook derives them, or the resource's authorize check sets them
	// from the caller. The files of `credo load` (and seeding) set them like any member, and
	// a beforeWrite hook still derives its own. Left out, they take their default, or null, or
	// their type's zero value.
	ReadOnly bool `yaml:"readOnly"`
	// References names another descriptor whose (single) key the member's non-null values
	// must name. `credo load` checks it, against the partition and the file; the API does not,
	// as the original platform did not.
	References string `yaml:"references"`
	// WriteOnly members are input only: create, update and load accept them, but no response,
	// format or projection returns them, and they are neither filters nor sort fields
	// (passwords, password hashes, one-time codes).
	WriteOnly bool `yaml:"writeOnly"`
	// Hash stores a write-only string member only as a slow salted hash of the value given:
	// `argon2id` (a PHC string). The plain value is never stored.
	Hash string `yaml:"hash"`
}

// ComputedSpec is a member derived in SQL when read; exactly one of Lookup and Count is set.
type ComputedSpec struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
	// Output makes the member part of the record returned by get and list (it is never written).
	Output bool `yaml:"output"`
	// Lookup returns Field of the first record of From whose Remote equals this record's Local.
	Lookup *LinkSpec `yaml:"lookup"`
	// Count returns how many records of From have Remote equal to this record's Local.
	Count *LinkSpec `yaml:"count"`
}

// LinkSpec relates this record to records of another descriptor.
type LinkSpec struct {
	// From is the other descriptor's Name.
	From string `yaml:"from"`
	// Local is a field of this record.
	Local string `yaml:"local"`
	// Remote is the field of From that matches Local.
	Remote string `yaml:"remote"`
	// Field is the field of From that a lookup returns or a scope compares.
	Field string `yaml:"field"`
}

// FilterSpec is an extra filter parameter.
type FilterSpec struct {
	// Name is the query parameter, e.g. ClassStartedSince.
	Name string `yaml:"name"`
	// Field is the stored or computed member it filters.
	Field string `yaml:"field"`
	// Op is eq, contains, gte (inclusive lower bound) or lt (exclusive upper bound).
	Op string `yaml:"op"`
}

// ScopeSpec is one organization condition: Field equals the caller's organization, or, with
// Via, Field is among Via.Remote of the Via.From records whose Via.Field is the organization.
// An entry with Any instead holds when one of its entries (each a Field with Via) holds.
type ScopeSpec struct {
	Field string      `yaml:"field"`
	Via   *LinkSpec   `yaml:"via"`
	Any   []ScopeSpec `yaml:"any"`
}

// UniqueSpec is one unique constraint, written as the list of its fields, `[A, B]`, or as a
// mapping, `{fields: [A, B], fold: ascii}`.
type UniqueSpec struct {
	Fields []string `yaml:"fields"`
	// Fold is how the constraint compares its string members: exact (the default) or ascii
	// (the letters A–Z and a–z alike, every other character exactly; see Fold).
	Fold string `yaml:"fold"`
}

// UnmarshalYAML reads either form, refusing unknown keys as the strict decoder does (a
// decoder of a node does not inherit KnownFields).
func (u *UniqueSpec) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.SequenceNode:
		return n.Decode(&u.Fields)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			var err error
			switch k.Value {
			case "fields":
				err = v.Decode(&u.Fields)
			case "fold":
				err = v.Decode(&u.Fold)
			default:
				return fmt.Errorf("line %d: unique: unknown key %q (fields, fold)", k.Line, k.Value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("line %d: a unique entry is a list of fields or {fields: [...], fold: ...}", n.Line)
}

// HookSpec names registered hooks (see hooks.go).
type HookSpec struct {
	// BeforeWrite hooks adjust a record before create, update and patch (derived members).
	BeforeWrite []string `yaml:"beforeWrite"`
	// AfterDelete hooks run in the delete's transaction with the deleted record.
	AfterDelete []string `yaml:"afterDelete"`
	// Authorize names write checks that the server's authorizer supplies (not the engine):
	// each decides, in the write's transaction, whether the caller may make the change.
	Authorize []string `yaml:"authorize"`
}
