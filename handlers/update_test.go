package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestPeopleFieldsMembersAreOptional: every PersonField member is optional (api.md rule 8).
// PUT with only FieldValue replaces the record (decisions §4: omitted members become null or
// zero) and answers 200; on a missing id it is 404, never a 400 for a missing member; PATCH
// changes FieldValue alone.
func TestPeopleFieldsMembersAreOptional(t *testing.T) {
	reg := registry(t)
	fields := reg.MustByName("PersonField")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			user, org := uuid.NewString(), uuid.NewString()
			got := put(t, ts, fields, map[string]any{"UserIdentifier": user, "OrganizationIdentifier": org,
				"FieldName": "Shoe size", "FieldValue": "42", "FieldSequence": 3})
			item := itemPath(fields, got)

			ts.do(t, "PATCH", item, `{"FieldValue":"43"}`).expect(t, "patch FieldValue", http.StatusOK)
			want := map[string]any{"FieldIdentifier": got["FieldIdentifier"], "UserIdentifier": user, "OrganizationIdentifier": org,
				"FieldName": "Shoe size", "FieldValue": "43", "FieldSequence": 3.0}
			expectRecord(t, ts, item, want)

			ts.do(t, "PUT", item, `{"FieldValue":"44"}`).expect(t, "put FieldValue only", http.StatusOK)
			want = map[string]any{"FieldIdentifier": got["FieldIdentifier"], "UserIdentifier": uuid.Nil.String(),
				"OrganizationIdentifier": uuid.Nil.String(), "FieldName": nil, "FieldValue": "44", "FieldSequence": nil}
			expectRecord(t, ts, item, want)

			missing := "directory/people-fields/" + uuid.NewString()
			for _, method := range []string{"PUT", "PATCH"} {
				ts.do(t, method, missing, `{"FieldValue":"1"}`).expect(t, method+" missing", http.StatusNotFound)
			}
		})
	}
}

// expectRecord asserts that GET path answers exactly want.
func expectRecord(t *testing.T, ts *testServer, path string, want map[string]any) {
	t.Helper()
	res := ts.do(t, "GET", path, "").expect(t, "get", http.StatusOK)
	var rec map[string]any
	if err := json.Unmarshal(res.body, &rec); err != nil {
		t.Fatal(err)
	}
	if mustJSON(rec) != mustJSON(want) {
		t.Errorf("record %s\nwant   %s", mustJSON(rec), mustJSON(want))
	}
}
