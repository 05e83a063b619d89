package people_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"credo/engine"
)

// TestImportBodyDetail: a body that is not a JSON array of rows is a 400 whose Detail says in
// the API's words what is wrong, as a create's body does, on both stores. Before, the import
// passed encoding/json's message on: `{}` was "json: cannot unmarshal object into Go value of
// type []json.RawMessage", and a row nested too deep was "the row must be a PersonImportRow
// object" although it was one.
func TestImportBodyDetail(t *testing.T) {
	// deep is beyond encoding/json's own bound (10,000); deep rows are within it.
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	deepRow := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	for _, c := range []struct {
		name, body, detail string
		errors             map[string][]string
	}{
		{name: "object", body: `{}`, detail: "the body must be a JSON array of PersonImportRow objects, not an object"},
		{name: "null", body: `null`, detail: "the body must be a JSON array of PersonImportRow objects, not null"},
		{name: "string", body: `"x"`, detail: "the body must be a JSON array of PersonImportRow objects, not a string"},
		{name: "number", body: ` 1 `, detail: "the body must be a JSON array of PersonImportRow objects, not a number"},
		{name: "bool", body: `true`, detail: "the body must be a JSON array of PersonImportRow objects, not true or false"},
		{name: "cut", body: `[1,`, detail: "the body is not valid JSON: it ends too early"},
		{name: "empty", body: ``, detail: "the body is not valid JSON: it ends too early"},
		{name: "two values", body: `[] []`, detail: "the body is not valid JSON: more data after the JSON value at byte 3"},
		{name: "byte order mark", body: "\xef\xbb\xbf[]", detail: "the body is not valid JSON: a byte order mark (EF BB BF), which JSON does not take, at byte 0"},
		{name: "deep", body: deep, detail: "the body is not valid JSON: objects and arrays nested more than 64 deep at byte 64"},
		{name: "deep row", body: `[{"Email":` + deepRow + `}]`,
			detail: "1 problem(s) in 1 row(s); nothing was imported",
			errors: map[string][]string{"Row": {"the row nests objects and arrays more than 64 deep (0)"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, st *engine.Store) {
				before := count(t, st)
				rec := post(t, st, callerA, []byte(c.body), "")
				problemOf(t, rec, http.StatusBadRequest)
				var p struct {
					Detail string
					Errors map[string][]string
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
					t.Fatal(err)
				}
				if p.Detail != c.detail {
					t.Errorf("Detail %q, want %q", p.Detail, c.detail)
				}
				if got, _ := json.Marshal(p.Errors); c.errors != nil && !bytes.Equal(got, mustJSON(t, c.errors)) {
					t.Errorf("Errors %s, want %s", got, mustJSON(t, c.errors))
				}
				if got := count(t, st); got != before {
					t.Errorf("after the refused import %+v, want %+v", got, before)
				}
			})
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
