package engine_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"credo/engine"
	"credo/resources"
)

// TestDescriptorErrors loads each malformed descriptor of testdata/descriptors/invalid on its
// own and checks that loading fails with an error naming the file, the line of the problem
// and what is wrong, so that a maintainer can go straight to the mistake.
func TestDescriptorErrors(t *testing.T) {
	tests := []struct {
		file string
		line int
		want string
	}{
		{file: "unknown-key.yaml", line: 7, want: "field colour not found"},
		{file: "unknown-type.yaml", line: 9, want: `unknown type "text"`},
		{file: "filter-missing-member.yaml", line: 12, want: `"WidgetUpdated" is not a member`},
		{file: "key-not-field.yaml", line: 6, want: "key WidgetId is not a field"},
		{file: "unknown-operation.yaml", line: 7, want: `unknown operation "upsert"`},
		{file: "unknown-hook.yaml", line: 11, want: `unknown beforeWrite hook "widget-title"`},
		// The directory registers group-slug (GroupName, GroupSlug) and membership-deletion
		// (which writes MembershipDeletion); see hooks_test.go.
		{file: "hook-missing-member.yaml", line: 11, want: "hook group-slug needs the member GroupSlug, which Widget lacks"},
		{file: "hook-missing-descriptor.yaml", line: 13, want: "hook membership-deletion needs the descriptor MembershipDeletion, which is not loaded"},
		{file: "sort-unknown-field.yaml", line: 10, want: `unknown sort field "WidgetName"`},
		{file: "lookup-unknown-descriptor.yaml", line: 14, want: `unknown descriptor "Gadget"`},
		{file: "references-unknown-descriptor.yaml", line: 9, want: `references: unknown descriptor "Gadget"`},
		{file: "references-wrong-type.yaml", line: 9, want: "ParentCode references Widget, which must have a single key field of type string"},
		// The engine reports the first occurrence of the name (line 9), not the second
		// declaration (line 11); see the note on findLine in docs/descriptors.md.
		{file: "duplicate-field.yaml", line: 9, want: "field WidgetTitle is declared twice"},
		{file: "writeonly-filter.yaml", line: 10, want: "field WidgetSecret is writeOnly and cannot be a filter"},
		{file: "hash-not-writeonly.yaml", line: 10, want: "field WidgetPin: hash needs writeOnly: true"},
		{file: "sort-writeonly.yaml", line: 9, want: "WidgetSecret is write-only and cannot be sorted on"},
		{file: "scope-any-with-field.yaml", line: 13, want: "a scope entry with any has no field or via of its own"},
		{file: "scope-any-one-entry.yaml", line: 13, want: "scope any needs two entries or more"},
		{file: "scope-any-entry-without-via.yaml", line: 15, want: "an entry of scope any is a field with via"},
		{file: "scope-any-nested.yaml", line: 16, want: "an entry of scope any is a field with via (no any of its own)"},
		{file: "scope-any-unknown-remote.yaml", line: 16, want: `remote "GuardianIdentifier" is not a field of Widget`},
		{file: "scope-entry-without-field.yaml", line: 12, want: "a scope entry needs a field (or any)"},
		{file: "unique-unknown-fold.yaml", line: 11, want: `unique: unknown fold "unicode" (exact, ascii)`},
		{file: "unique-unknown-key.yaml", line: 12, want: `unique: unknown key "ignoreCase" (fields, fold)`},
		{file: "unique-fold-no-string.yaml", line: 11, want: "unique (WidgetSize): fold ascii needs a string field"},
		{file: "unique-fold-mixed.yaml", line: 13, want: "unique: WidgetCode is in a constraint with fold ascii and in one without"},
		{file: "unique-omitted-zero.yaml", line: 11, want: "unique (WidgetSerial): a record that omits WidgetSerial stores it as 0 (its zero value), so only one record could omit it; make WidgetSerial required, or nullable"},
	}
	files, err := filepath.Glob("../testdata/descriptors/invalid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("testdata/descriptors/invalid holds %d files, the table %d: give every fixture a case", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../testdata/descriptors/invalid", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = engine.Load(fstest.MapFS{tt.file: {Data: data}})
			if err == nil {
				t.Fatalf("Load(%s) succeeded; want an error at line %d", tt.file, tt.line)
			}
			if got := errorLine(err, tt.file); got != tt.line {
				t.Errorf("Load(%s) error names line %d, want %d:\n%v", tt.file, got, tt.line, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load(%s) error = %v\nwant it to say %q", tt.file, err, tt.want)
			}
		})
	}
}

// errorLine returns the line an error message gives for file: the engine's own checks write
// "file:7:", strict YAML decoding (unknown keys) writes "file: … line 7:". It returns 0 when
// the message does not name file with a line.
func errorLine(err error, file string) int {
	q := regexp.QuoteMeta(file)
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(q + `:(\d+):`),
		regexp.MustCompile(`(?s)` + q + `: .*?line (\d+):`),
	} {
		if m := re.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

// TestExtraGroup proves that a record group is added by a descriptor alone: loading the
// embedded descriptors together with testdata/descriptors/extra yields a 16th public group
// with the operations and filters its file declares.
func TestExtraGroup(t *testing.T) {
	reg, err := engine.Load(resources.FS, os.DirFS("../testdata/descriptors/extra"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(reg.Public()), len(base.Public())+1; got != want {
		t.Errorf("%d public groups, want %d", got, want)
	}
	r, ok := reg.ByName("security/users-notes")
	if !ok {
		t.Fatal("security/users-notes is not loaded")
	}
	if r.Name != "UserNote" || r.Table != "user_notes" {
		t.Errorf("name %s table %s, want UserNote user_notes", r.Name, r.Table)
	}
	wantOps := []engine.Op{engine.OpGet, engine.OpExists, engine.OpUpdate, engine.OpPatch, engine.OpDelete,
		engine.OpCreate, engine.OpCount, engine.OpList, engine.OpSearch}
	if got := r.Ops(); !sameSlice(got, wantOps) {
		t.Errorf("ops %v, want %v", got, wantOps)
	}
	wantFilters := []string{"CommentCreatedBy", "OrganizationIdentifier", "UserIdentifier", "CommentText", "CommentCreated"}
	if got := groupFilterNames(r); !sameSlice(got, wantFilters) {
		t.Errorf("filters %v, want %v", got, wantFilters)
	}
	if f, _ := r.Filter("CommentText"); f == nil || f.Op != engine.MatchContains {
		t.Errorf("CommentText filter %+v, want contains", f)
	}
	if got := r.KeyNames(); !sameSlice(got, []string{"CommentIdentifier"}) {
		t.Errorf("key %v, want [CommentIdentifier]", got)
	}
}
