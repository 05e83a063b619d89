package engine_test

import (
	"strconv"
	"strings"
	"testing"

	"credo/engine"
)

// TestUniqueThatOnlyOneRecordMayOmit: an omitted member that is neither nullable nor given a
// default stores its zero value (decisions §4, Update), so a unique constraint whose members
// a write may all omit and then stores the same way lets only one record omit them: the next
// is a conflict over values nobody sent. Load refuses such a constraint at its line, naming
// the constraint, its members, what they store and how to fix it. A constraint one of whose
// members every write gives, or stores apart from the others' (null, an empty string, a new
// UUID, the time), loads: users-fields' (OrganizationIdentifier, UserIdentifier, Name,
// ValueType), one user field without an organization per user, name and type, is one.
func TestUniqueThatOnlyOneRecordMayOmit(t *testing.T) {
	tests := []struct {
		name   string
		fields []string // members added to users.yaml
		unique string   // the unique entry added to users.yaml
		scope  string   // a scope entry added to users.yaml
		want   string   // the error; "" when the descriptors load
	}{
		{name: "int", fields: []string{"{name: Badge, type: int}"}, unique: "[Badge]",
			want: "unique (Badge): a record that omits Badge stores it as 0 (its zero value), so only one record could omit it; make Badge required, or nullable (a null never collides)"},
		{name: "bool", fields: []string{"{name: Badge, type: bool}"}, unique: "[Badge]",
			want: "stores it as false (its zero value)"},
		{name: "uuid", fields: []string{"{name: Badge, type: uuid}"}, unique: "[Badge]",
			want: `stores it as "00000000-0000-0000-0000-000000000000" (its zero value)`},
		{name: "datetime", fields: []string{"{name: Badge, type: datetime}"}, unique: "[Badge]",
			want: "stores it as 0001-01-01T00:00:00"},
		{name: "literal default", fields: []string{"{name: Badge, type: int, default: '7'}"}, unique: "[Badge]",
			want: "stores it as 7 (its default), so only one record could omit it; make Badge required, or nullable without a default"},
		{name: "string with a literal default", fields: []string{"{name: Badge, type: string, default: gold}"}, unique: "[Badge]",
			want: `stores it as "gold" (its default)`},
		{name: "nullable with a literal default", fields: []string{"{name: Badge, type: int, nullable: true, default: '7'}"}, unique: "[Badge]",
			want: "make Badge required, or nullable without a default"},
		{name: "two members", fields: []string{"{name: Badge, type: int}", "{name: Level, type: bool}"}, unique: "[Badge, Level]",
			want: "unique (Badge, Level): a record that omits Badge and Level stores them as 0 (its zero value) and false (its zero value), so only one record could omit them; make one of them required, or nullable (a null never collides)"},

		{name: "required", fields: []string{"{name: Badge, type: int, required: true}"}, unique: "[Badge]"},
		{name: "nullable", fields: []string{"{name: Badge, type: int, nullable: true}"}, unique: "[Badge]"},
		{name: "string", fields: []string{"{name: Badge, type: string}"}, unique: "[Badge]"},
		{name: "default new", fields: []string{"{name: Badge, type: uuid, default: new}"}, unique: "[Badge]"},
		{name: "default now", fields: []string{"{name: Badge, type: datetime, default: now}"}, unique: "[Badge]"},
		{name: "the organization of a scoped record", fields: []string{"{name: Badge, type: uuid}"}, unique: "[Badge]", scope: "field: Badge"},
		{name: "read-only", fields: []string{"{name: Badge, type: int, readOnly: true}"}, unique: "[Badge]"},
		{name: "with the key", fields: []string{"{name: Badge, type: int}"}, unique: "[Badge, UserIdentifier]"},
		{name: "with a string", fields: []string{"{name: Badge, type: int}"}, unique: "[Badge, TimeZone]"},
		{name: "with a nullable member", fields: []string{"{name: Badge, type: int}", "{name: Level, type: bool, nullable: true}"}, unique: "[Badge, Level]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var edited string
			files := editedUsers(t, func(data string) string {
				const u, f = "  - {fields: [Email], fold: ascii}\n", "  - {name: TimeZone, type: string}\n"
				text := strings.Replace(data, u, u+"  - "+tt.unique+"\n", 1)
				text = strings.Replace(text, f, f+"  - "+strings.Join(tt.fields, "\n  - ")+"\n", 1)
				if tt.scope != "" {
					text = strings.Replace(text, "\nscope:\n", "\nscope:\n  - "+tt.scope+"\n", 1)
				}
				if !strings.Contains(text, tt.unique) || !strings.Contains(text, tt.fields[0]) || !strings.Contains(text, tt.scope) {
					return ""
				}
				edited = text
				return text
			})
			_, err := engine.Load(files)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Load refused the constraint %s: %v", tt.unique, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load accepted the constraint %s; want %q", tt.unique, tt.want)
			}
			line := strings.Count(edited[:strings.Index(edited, "  - "+tt.unique)], "\n") + 1
			if at := "descriptor security/users.yaml:" + strconv.Itoa(line) + ": "; !strings.Contains(err.Error(), at) {
				t.Errorf("Load error = %v\nwant it at %q", err, at)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load error = %v\nwant it to say %q", err, tt.want)
			}
		})
	}
}
