package handlers_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestBodyProblemsComeTogether (both stores): a v2 POST, PUT or PATCH body with a member of
// the wrong JSON type is one 400 whose Errors name every problem of the body, each with its
// message alone: the member that did not decode, the required members it omits and the nil
// UUID in a required reference. A member that did not decode is not also missing. A body
// that is not a JSON object stays a 400 of its own, and a missing record a 404.
func TestBodyProblemsComeTogether(t *testing.T) {
	reg := registry(t)
	comments := reg.MustByName("UserComment")
	const nilUUID = "00000000-0000-0000-0000-000000000000"
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			errorsOf := func(what string, res response) map[string][]string {
				t.Helper()
				res.expect(t, what, http.StatusBadRequest)
				var p struct {
					Status int
					Errors map[string][]string
				}
				if err := json.Unmarshal(res.body, &p); err != nil || p.Status != http.StatusBadRequest {
					t.Fatalf("%s: %v: %s", what, err, res.body)
				}
				return p.Errors
			}
			expect := func(what string, res response, want map[string][]string) {
				t.Helper()
				if got := errorsOf(what, res); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: Errors\n got %q\nwant %q", what, got, want)
				}
			}
			expect("POST", ts.do(t, "POST", comments.Path, `{"CommentText":7}`), map[string][]string{
				"CommentText":            {"CommentText must be a string"},
				"CommentCreatedBy":       {"CommentCreatedBy is required"},
				"OrganizationIdentifier": {"OrganizationIdentifier is required"},
				"UserIdentifier":         {"UserIdentifier is required"},
			})
			expect("POST with a required member of the wrong type", ts.do(t, "POST", comments.Path,
				`{"CommentText":"fine","UserIdentifier":7,"CommentCreatedBy":"`+nilUUID+`","CommentCreated":"0001-01-01T00:30:00+01:00","Bogus":1}`),
				map[string][]string{
					"UserIdentifier":         {"UserIdentifier must be a uuid string"},
					"CommentCreatedBy":       {"CommentCreatedBy is required and cannot be the nil UUID " + nilUUID},
					"OrganizationIdentifier": {"OrganizationIdentifier is required"},
					"CommentCreated":         errorsOf("a datetime before 0001 alone", ts.do(t, "POST", comments.Path, `{"CommentCreated":"0001-01-01T00:30:00+01:00"}`))["CommentCreated"],
					"Bogus":                  {"Bogus is not a member of UserComment"},
				})

			got := put(t, ts, comments, map[string]any{"CommentCreatedBy": uuid.NewString(), "OrganizationIdentifier": uuid.NewString(),
				"UserIdentifier": uuid.NewString(), "CommentText": "kept"})
			item := itemPath(comments, got)
			expect("PUT", ts.do(t, "PUT", item, `{"CommentText":7,"UserIdentifier":"`+nilUUID+`"}`), map[string][]string{
				"CommentText":            {"CommentText must be a string"},
				"CommentCreatedBy":       {"CommentCreatedBy is required"},
				"OrganizationIdentifier": {"OrganizationIdentifier is required"},
				"UserIdentifier":         {"UserIdentifier is required and cannot be the nil UUID " + nilUUID},
			})
			expect("PATCH", ts.do(t, "PATCH", item, `{"CommentText":7,"UserIdentifier":"`+nilUUID+`","OrganizationIdentifier":null}`,
				"Content-Type", "application/merge-patch+json"), map[string][]string{
				"CommentText":            {"CommentText must be a string"},
				"OrganizationIdentifier": {"OrganizationIdentifier cannot be null"},
				"UserIdentifier":         {"UserIdentifier is required and cannot be the nil UUID " + nilUUID},
			})
			if now := ts.do(t, "GET", item, "").expect(t, "get after", http.StatusOK); !json.Valid(now.body) ||
				!reflect.DeepEqual(decode(t, now.body)["CommentText"], "kept") {
				t.Errorf("the refused writes changed the record: %s", now.body)
			}
			missing := comments.Path + "/" + uuid.NewString()
			ts.do(t, "PUT", missing, `{"CommentText":7}`).expect(t, "PUT of a missing record", http.StatusNotFound)
			ts.do(t, "PATCH", missing, `{"CommentText":7}`, "Content-Type", "application/merge-patch+json").
				expect(t, "PATCH of a missing record", http.StatusNotFound)
			ts.do(t, "POST", comments.Path, `[{"CommentText":7}]`).expect(t, "an array", http.StatusBadRequest)
		})
	}
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
