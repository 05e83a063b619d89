package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestAnswersDoNotShareBuffers: gets, lists and creates encode into pooled buffers. Served by
// eight clients at once, every get and list answer is byte for byte the one served alone, and
// two more clients' creates each answer the record they made: a buffer given back to the pool
// before its answer was written, or shared by two answers, would mix them. One page is larger
// than the pool keeps.
func TestAnswersDoNotShareBuffers(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newUnvalidatedTestServer(t, b, reg)
			org, user := uuid.NewString(), uuid.NewString()
			var paths []string
			// The page of all 100 holds about 290 KB: larger than the pool keeps.
			for i := range 100 {
				text := fmt.Sprintf("comment %d ", i) + strings.Repeat(string(rune('a'+i%26)), min(60*i, 3900))
				res := ts.do(t, "POST", "security/users-comments", fmt.Sprintf(
					`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":%q}`,
					user, org, user, text)).expect(t, "create", http.StatusCreated)
				var rec struct{ CommentIdentifier string }
				if err := json.Unmarshal(res.body, &rec); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, "security/users-comments/"+rec.CommentIdentifier)
			}
			for _, take := range []int{1, 2, 5, 20, 33, 60, 100} {
				paths = append(paths, fmt.Sprintf("security/users-comments?OrganizationIdentifier=%s&Take=%d", org, take))
			}
			get := func(path string) ([]byte, error) {
				res, err := ts.Client().Get(ts.URL + "/v2/" + ts.partition + "/" + path)
				if err != nil {
					return nil, err
				}
				defer res.Body.Close()
				body, err := io.ReadAll(res.Body)
				if err == nil && res.StatusCode != http.StatusOK {
					err = fmt.Errorf("GET %s: %d %s", path, res.StatusCode, body)
				}
				return body, err
			}
			want := make([][]byte, len(paths))
			for i, p := range paths {
				var err error
				if want[i], err = get(p); err != nil {
					t.Fatal(err)
				}
			}
			// create answers a new comment and reports whether its body and Location are its own.
			create := func(text string) bool {
				res, err := ts.Client().Post(ts.URL+"/v2/"+ts.partition+"/security/users-comments", "application/json",
					strings.NewReader(fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":%q}`,
						user, uuid.NewString(), user, text)))
				if err != nil {
					return false
				}
				defer res.Body.Close()
				var rec struct{ CommentIdentifier, CommentText string }
				if res.StatusCode != http.StatusCreated || json.NewDecoder(res.Body).Decode(&rec) != nil {
					return false
				}
				return rec.CommentText == text && strings.HasSuffix(res.Header.Get("Location"), "/"+rec.CommentIdentifier)
			}
			var wg sync.WaitGroup
			var wrong atomic.Int64
			for g := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range 60 {
						if !create(fmt.Sprintf("created by %d, %d: %s", g, n, strings.Repeat("x", n*50))) {
							wrong.Add(1)
						}
					}
				}()
			}
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range 120 {
						i := (g*31 + n*7) % len(paths)
						got, err := get(paths[i])
						if err != nil || !bytes.Equal(got, want[i]) {
							wrong.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			if n := wrong.Load(); n != 0 {
				t.Errorf("%d of 960 concurrent answers differ from the same request served alone, or of 120 creates answer another record", n)
			}
		})
	}
}
