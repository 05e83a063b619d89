package handlers_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// Test hooks standing for the mistakes a hook can make with a client's value: ShortName is
// GroupName's first 8 bytes (a byte cut that can split a character), declared as derived from
// it; Score is Points times a million (past the 32-bit integers from 2148 on), declared with
// no source.
func init() {
	engine.RegisterHook(engine.Hook{Name: "test-short-name", Members: []string{"GroupName", "ShortName"},
		Derives: map[string][]string{"ShortName": {"GroupName"}},
		BeforeWrite: func(r *engine.Resource, rec engine.Record) error {
			s, _ := rec.Get(r, "GroupName").(string)
			if len(s) > 8 {
				s = s[:8]
			}
			rec.Set(r, "ShortName", s)
			return nil
		}})
	engine.RegisterHook(engine.Hook{Name: "test-score", Members: []string{"Points", "Score"},
		BeforeWrite: func(r *engine.Resource, rec engine.Record) error {
			p, _ := rec.Get(r, "Points").(int64)
			rec.Set(r, "Score", p*1_000_000)
			return nil
		}})
}

// hookProbeYAML is a group whose members the hooks derive: the directory's group-slug (into
// a GroupSlug shorter than GroupName, and unique) and the two test hooks. slugMax is
// GroupSlug's maxLength.
func hookProbeYAML(slugMax string) string {
	return `name: HookProbe
path: security/hook-probes
table: hook_probes
summary: A group's name and what hooks derive from it (tests only).
operations: [get, exists, create, update, delete, count, list, search]
key: [ProbeIdentifier]
fields:
  - {name: ProbeIdentifier, type: uuid}
  - {name: GroupName, type: string, required: true, maxLength: 40}
  - {name: GroupSlug, type: string, nullable: true, readOnly: true, maxLength: ` + slugMax + `}
  - {name: ShortName, type: string, nullable: true, readOnly: true}
  - {name: Points, type: int}
  - {name: Score, type: int, readOnly: true}
  - {name: ProbeNote, type: string, nullable: true}
unique:
  - [GroupSlug]
hooks:
  beforeWrite: [group-slug, test-short-name, test-score]
`
}

func hookProbeRegistry(t *testing.T, slugMax string) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS, fstest.MapFS{"hook-probes.yaml": {Data: []byte(hookProbeYAML(slugMax))}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// problemOf returns the Errors of a problem document.
func problemOf(t *testing.T, res response) map[string][]string {
	t.Helper()
	var p struct{ Errors map[string][]string }
	if err := json.Unmarshal(res.body, &p); err != nil {
		t.Fatalf("problem document: %v: %s", err, res.body)
	}
	return p.Errors
}

// TestHookValuesObeyTheMemberRules (both stores): a member a beforeWrite hook derives from a
// client's value is held to the rules a client's value is — a slug past its maxLength, a byte
// cut that splits a character, a product past the 32-bit integers are each a 400 naming the
// member the client sent (or the derived member, for a hook that declares no source), and
// nothing is stored; they were stored as they were (SQLite; PostgreSQL's columns keep any
// length), a database error without a member (PostgreSQL, invalid UTF-8) or a 500
// (PostgreSQL, int4). A unique clash on a derived member is the usual 400 naming it and the
// member it derives from. Lengths count characters, so a non-ASCII slug at its maxLength is
// taken.
func TestHookValuesObeyTheMemberRules(t *testing.T) {
	reg := hookProbeRegistry(t, "12")
	r := reg.MustByName("HookProbe")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			for _, c := range []struct {
				what, body string
				status     int
				names      string // the member the problem names
				says       string // part of its message
			}{
				{what: "slug past its maxLength", body: `{"GroupName":"` + strings.Repeat("a", 13) + `"}`,
					status: 400, names: "GroupName", says: "GroupSlug, which the server derives from GroupName, is 13 characters long; the maximum is 12"},
				{what: "non-ASCII slug at its maxLength", body: `{"GroupName":"` + strings.Repeat("É", 12) + `"}`, status: 201},
				{what: "byte cut splitting a character", body: `{"GroupName":"aééééé"}`,
					status: 400, names: "GroupName", says: "ShortName, which the server derives from GroupName,"},
				{what: "product past the 32-bit integers", body: `{"GroupName":"big","Points":2148}`,
					status: 400, names: "Score", says: "Score is 2148000000, outside the 32-bit integers"},
				{what: "product within them", body: `{"GroupName":"small","Points":2147}`, status: 201},
				{what: "name whose slug is empty", body: `{"GroupName":"!!!"}`, status: 201},
				{what: "another whose slug is empty", body: `{"GroupName":"---"}`, status: 201},
				{what: "a slug", body: `{"GroupName":"Hello World"}`, status: 201},
				{what: "the same slug from another name", body: `{"GroupName":"hello-world"}`,
					status: 400, names: "GroupName", says: "the server derives GroupSlug from GroupName"},
			} {
				res := ts.do(t, "POST", r.Path, c.body).expect(t, c.what, c.status)
				if strings.Contains(c.what, "slug is empty") && !strings.Contains(string(res.body), `"GroupSlug":null`) {
					// No slug is made of a name without a letter or digit: null, not "", so
					// that two such records do not clash on the unique GroupSlug.
					t.Errorf("%s: %s, want GroupSlug null", c.what, res.body)
				}
				if c.status != 400 {
					continue
				}
				msgs := problemOf(t, res)[c.names]
				if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "\n"), c.says) {
					t.Errorf("%s: problem %s, want %s to say %q", c.what, res.body, c.names, c.says)
				}
			}
			n := ts.do(t, "GET", r.Path+"/count", "").expect(t, "count", http.StatusOK)
			if strings.TrimSpace(string(n.body)) != `{"Count":5}` {
				t.Errorf("count %s, want the 5 records taken", n.body)
			}
			// A replacement and a patch are judged alike, and leave the record as it was.
			got := put(t, ts, r, map[string]any{"GroupName": "plain"})
			item := itemPath(r, got)
			ts.do(t, "PUT", item, `{"GroupName":"`+strings.Repeat("b", 20)+`"}`).expect(t, "update", 400).problemNames(t, "update", "GroupName")
			ts.do(t, "PATCH", item, `{"Points":5000}`, "Content-Type", "application/merge-patch+json").expect(t, "patch", 400).problemNames(t, "patch", "Score")
			after := ts.do(t, "GET", item, "").expect(t, "get", http.StatusOK)
			if !strings.Contains(string(after.body), `"GroupSlug":"plain"`) || !strings.Contains(string(after.body), `"Score":0`) {
				t.Errorf("after refused writes: %s", after.body)
			}
		})
	}
}

// TestHookValuesStoredBeforeStayPatchable (both stores): a derived value stored before its
// descriptor lowered the member's maxLength is not judged again by a patch that leaves it as
// it was (complete keeps stored values patchable the same way); a patch that changes it is.
func TestHookValuesStoredBeforeStayPatchable(t *testing.T) {
	wide, narrow := hookProbeRegistry(t, "40"), hookProbeRegistry(t, "12")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			partition := testenv.Partition(t)
			before := newTestServer(t, b, wide, partition)
			r := wide.MustByName("HookProbe")
			got := put(t, before, r, map[string]any{"GroupName": strings.Repeat("c", 20)})
			item := itemPath(r, got)
			ts := newTestServer(t, b, narrow, partition)
			patch := func(body string) response {
				return ts.do(t, "PATCH", item, body, "Content-Type", "application/merge-patch+json")
			}
			patch(`{"ProbeNote":"still patchable"}`).expect(t, "patch of another member", http.StatusOK)
			patch(`{"GroupName":"`+strings.Repeat("d", 20)+`"}`).expect(t, "patch of the name", 400).problemNames(t, "patch of the name", "GroupName")
		})
	}
}

// A test hook that writes a member it does not declare: it declares StrayName and sets
// StrayNote too.
func init() {
	engine.RegisterHook(engine.Hook{Name: "test-undeclared-write", Members: []string{"StrayName"},
		BeforeWrite: func(r *engine.Resource, rec engine.Record) error {
			rec.Set(r, "StrayNote", "set by a hook that does not declare it")
			return nil
		}})
}

// TestHookWritingUndeclaredMemberIs500 (both stores): over the API, a beforeWrite hook that
// sets a member it does not declare (a programming error: no body can mend it, and the
// shipped hooks set only what they declare) is a 500 whose log line names the hook, the
// resource and the member, and nothing is stored; the member is never stored unchecked.
func TestHookWritingUndeclaredMemberIs500(t *testing.T) {
	reg, err := engine.Load(resources.FS, fstest.MapFS{"strays.yaml": {Data: []byte(`name: StrayProbe
path: security/stray-probes
table: stray_probes
summary: A record whose hook writes a member it does not declare (tests only).
operations: [get, exists, create, update, delete, count, list, search]
key: [StrayIdentifier]
fields:
  - {name: StrayIdentifier, type: uuid}
  - {name: StrayName, type: string}
  - {name: StrayNote, type: string, nullable: true}
hooks:
  beforeWrite: [test-undeclared-write]
`)}})
	if err != nil {
		t.Fatal(err)
	}
	logged := &syncWriter{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logged, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			ts.do(t, "POST", "security/stray-probes", `{"StrayName":"a"}`).expect(t, "create", http.StatusInternalServerError)
			n := ts.do(t, "GET", "security/stray-probes/count", "").expect(t, "count", http.StatusOK)
			if strings.TrimSpace(string(n.body)) != `{"Count":0}` {
				t.Errorf("count %s after the failed create, want 0", n.body)
			}
			if !strings.Contains(logged.String(), "beforeWrite hook test-undeclared-write set StrayProbe.StrayNote, which it may not set") {
				t.Errorf("the log does not name the hook and the member:\n%s", logged.String())
			}
		})
	}
}
