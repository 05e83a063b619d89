package handlers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestConcurrentPatchesLoseNothing: two clients PATCH different members of the same 25 records
// at the same moment, 100 rounds; after every round each record holds both clients' values.
// A merge that reads the record without a lock and rewrites every column loses one of them.
func TestConcurrentPatchesLoseNothing(t *testing.T) {
	const records, rounds = 25, 100
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			ids := make([]string, records)
			for i := range ids {
				res := ts.do(t, "POST", "security/users-comments", fmt.Sprintf(
					`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"start","CommentCreated":"2024-01-01T00:00:00Z"}`,
					uuid.NewString(), uuid.NewString(), uuid.NewString())).expect(t, "create", http.StatusCreated)
				var rec struct{ CommentIdentifier string }
				if err := json.Unmarshal(res.body, &rec); err != nil {
					t.Fatal(err)
				}
				ids[i] = rec.CommentIdentifier
			}
			text := func(round int) string { return fmt.Sprintf("round %d", round) }
			created := func(round int) string {
				return fmt.Sprintf("2024-01-01T%02d:%02d:00+00:00", round/60, round%60)
			}
			patch := func(id, body string) error {
				req, err := http.NewRequest(http.MethodPatch, ts.URL+"/v2/"+ts.partition+"/security/users-comments/"+id, strings.NewReader(body))
				if err != nil {
					return err
				}
				req.Header.Set("Content-Type", "application/merge-patch+json")
				res, err := ts.Client().Do(req)
				if err != nil {
					return err
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				if res.StatusCode != http.StatusOK {
					return fmt.Errorf("PATCH %s: %d %s", body, res.StatusCode, b)
				}
				return nil
			}
			lost := 0
			for round := 1; round <= rounds; round++ {
				errs := make(chan error, 2*records)
				var wg sync.WaitGroup
				for _, id := range ids {
					wg.Add(2)
					go func() {
						defer wg.Done()
						errs <- patch(id, fmt.Sprintf(`{"CommentText":%q}`, text(round)))
					}()
					go func() {
						defer wg.Done()
						errs <- patch(id, fmt.Sprintf(`{"CommentCreated":%q}`, created(round)))
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
				}
				for _, id := range ids {
					var got struct{ CommentText, CommentCreated string }
					res := ts.do(t, "GET", "security/users-comments/"+id, "").expect(t, "get", http.StatusOK)
					if err := json.Unmarshal(res.body, &got); err != nil {
						t.Fatal(err)
					}
					if got.CommentText != text(round) {
						lost++
					}
					if got.CommentCreated != created(round) {
						lost++
					}
				}
			}
			if lost > 0 {
				t.Fatalf("%d of %d concurrent PATCHes were lost", lost, 2*records*rounds)
			}
		})
	}
}
