package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// Records of one partition are unreachable from another by any route and parameter.
func TestPartitionsAreIsolated(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			one, two := testenv.Partition(t), testenv.Partition(t)
			ts := newTestServer(t, b, reg, one, two)
			other := &testServer{Server: ts.Server, partition: two}
			for _, r := range reg.Public() {
				got := put(t, ts, r, sample(r, 1))
				item := itemPath(r, got)
				id := "Identifier=" + fmt.Sprint(got[r.Key[0].Name])
				if r.Offers(engine.OpGet) {
					other.do(t, "GET", item, "").expect(t, r.Path+" get from the other partition", http.StatusNotFound)
				}
				if r.Offers(engine.OpExists) {
					other.do(t, "HEAD", item, "").expect(t, r.Path+" exists from the other partition", http.StatusNotFound)
				}
				if r.Offers(engine.OpCount) {
					res := other.do(t, "GET", r.Path+"/count", "").expect(t, r.Path+" count", http.StatusOK)
					if string(res.body) != "{\"Count\":0}\n" {
						t.Errorf("%s: count from the other partition: %s", r.Path, res.body)
					}
				}
				for _, op := range []engine.Op{engine.OpList, engine.OpSearch} {
					if !r.Offers(op) {
						continue
					}
					path := r.Path
					if op == engine.OpSearch {
						path += "/search"
					}
					for _, q := range []string{"", "?" + id, "?Take=1000"} {
						res := other.do(t, "GET", path+q, "").expect(t, r.Path+" list", http.StatusOK)
						var recs []json.RawMessage
						if err := json.Unmarshal(res.body, &recs); err != nil || len(recs) != 0 {
							t.Errorf("%s%s from the other partition: %s", path, q, res.body)
						}
					}
				}
				if r.Offers(engine.OpUpdate) {
					body := sample(r, 2)
					for _, k := range r.Key {
						delete(body, k.Name)
					}
					b, _ := json.Marshal(body)
					other.do(t, "PUT", item, string(b)).expect(t, r.Path+" update from the other partition", http.StatusNotFound)
					other.do(t, "PATCH", item, "{}").expect(t, r.Path+" patch from the other partition", http.StatusNotFound)
				}
				if r.Offers(engine.OpDelete) {
					other.do(t, "DELETE", item, "").expect(t, r.Path+" delete from the other partition", http.StatusNotFound)
				}
				if r.Offers(engine.OpGet) {
					ts.do(t, "GET", item, "").expect(t, r.Path+" still there in its own partition", http.StatusOK)
				}
			}
			unknown := &testServer{Server: ts.Server, partition: "nosuch"}
			res := unknown.do(t, "GET", "security/users-comments", "").expect(t, "unknown partition", http.StatusNotFound)
			if !strings.Contains(string(res.body), "partition") {
				t.Errorf("unknown partition problem: %s", res.body)
			}
		})
	}
}

// A datetime keeps its offset and 7 fraction digits through the API; one without an offset is
// a 400 naming the member.
func TestDateTimeOverHTTP(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			body := `{"CommentCreatedBy":"0190a6f0-0000-7000-8000-000000000001","OrganizationIdentifier":"0190a6f0-0000-7000-8000-000000000002","UserIdentifier":"0190a6f0-0000-7000-8000-000000000003","CommentCreated":"%s"}`
			res := ts.do(t, "POST", "security/users-comments", fmt.Sprintf(body, "2024-03-10T14:30:00.1234567-06:00")).expect(t, "create", http.StatusCreated)
			var rec map[string]any
			_ = json.Unmarshal(res.body, &rec)
			loc := strings.TrimPrefix(res.header.Get("Location"), "/v2/"+ts.partition+"/")
			res = ts.do(t, "GET", loc, "").expect(t, "get", http.StatusOK)
			if !strings.Contains(string(res.body), `"CommentCreated":"2024-03-10T14:30:00.1234567-06:00"`) {
				t.Errorf("datetime did not come back exactly: %s", res.body)
			}
			res = ts.do(t, "GET", "security/users-comments?CommentCreated=2024-03-10T20:30:00.1234567Z", "").expect(t, "filter by instant", http.StatusOK)
			if !strings.Contains(string(res.body), `"2024-03-10T14:30:00.1234567-06:00"`) {
				t.Errorf("filter by the same instant in UTC did not find it: %s", res.body)
			}
			ts.do(t, "POST", "security/users-comments", fmt.Sprintf(body, "2024-03-10T14:30:00")).expect(t, "no offset", http.StatusBadRequest).problemNames(t, "no offset", "CommentCreated")
			ts.do(t, "GET", "security/users-comments?CommentCreated=2024-03-10T14:30:00", "").expect(t, "filter without offset", http.StatusBadRequest).problemNames(t, "filter", "CommentCreated")
		})
	}
}
