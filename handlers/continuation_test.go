package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/engine"
	"credo/internal/testenv"
)

// continueWalkRows is how many comments the concurrent Continue walk reads: 100,000 (as issue
// 16 asks) with CREDO_TEST_LARGE=1, 20,000 otherwise (inserting 100,000 rows and walking them
// twice took 41 s for both stores on this machine, against 16 s for 20,000: too long for every
// run).
func continueWalkRows() int {
	if os.Getenv("CREDO_TEST_LARGE") == "1" {
		return 100_000
	}
	return 20_000
}

// TestContinueWalkUnderConcurrentInserts walks every comment with Continue while other
// goroutines insert more, on both stores, under the default sort (the key: an index seek) and
// under a sort with ties and mixed directions (CommentCreated desc, then the key ascending).
// Every comment that existed before the walk comes back exactly once; the walk is strictly in
// the order, so no row inserted before the cursor ever appears and none repeats; rows inserted
// after the cursor may appear.
func TestContinueWalkUnderConcurrentInserts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: large walk skipped")
	}
	rows := continueWalkRows()
	reg := registry(t)
	c := reg.MustByName("UserComment")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			began := time.Now()
			existing := insertComments(t, ts.store, c, 0, rows)
			t.Logf("inserted %d comments in %v", rows, time.Since(began))
			for _, sort := range []string{"", "CommentCreated desc"} {
				t.Run("Sort="+sort, func(t *testing.T) {
					walkWhileInserting(t, ts, c, sort, existing)
				})
			}
		})
	}
}

// comment is what the walk keeps of a record: the order's values.
type comment struct{ id, created string }

// before reports whether a comes before b in the sort ("" the key; else CommentCreated desc,
// then the key): the stored order, as both stores compare uuid and datetime text bytewise.
func (a comment) before(b comment, sort string) bool {
	if sort != "" && a.created != b.created {
		return a.created > b.created
	}
	return a.id < b.id
}

func walkWhileInserting(t *testing.T, ts *testServer, c *engine.Resource, sort string, existing map[string]bool) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var inserted atomic.Int64
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				insertComments(t, ts.store, c, 1_000_000*(g+1)+i*20, 20)
				inserted.Add(20)
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()

	query := "Take=1000&Includes=CommentIdentifier,CommentCreated"
	if sort != "" {
		query += "&Sort=" + url.QueryEscape(sort)
	}
	seen := map[string]bool{}
	var last *comment
	pages, extra := 0, 0
	began := time.Now()
	for next := query; ; pages++ {
		res := ts.do(t, "GET", c.Path+"?"+next, "").expect(t, "page", http.StatusOK)
		var recs []struct{ CommentIdentifier, CommentCreated string }
		if err := json.Unmarshal(res.body, &recs); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			cur := comment{r.CommentIdentifier, r.CommentCreated}
			if seen[cur.id] {
				t.Fatalf("page %d: %s again", pages+1, cur.id)
			}
			seen[cur.id] = true
			if !existing[cur.id] {
				extra++
			}
			if last != nil && !last.before(cur, sort) {
				t.Fatalf("page %d: %v follows %v out of order", pages+1, cur, *last)
			}
			last = &cur
		}
		var pg struct{ Continuation string }
		_ = json.Unmarshal([]byte(res.header.Get("X-Query-Pagination")), &pg)
		if pg.Continuation == "" {
			break
		}
		next = query + "&Continue=" + pg.Continuation
	}
	missing := 0
	for id := range existing {
		if !seen[id] {
			missing++
		}
	}
	t.Logf("%d pages in %v; %d rows inserted meanwhile, %d of them walked", pages+1, time.Since(began), inserted.Load(), extra)
	if missing > 0 {
		t.Errorf("%d of the %d comments that existed before the walk were not walked", missing, len(existing))
	}
	if inserted.Load() == 0 {
		t.Error("no row was inserted during the walk: the test proves nothing about concurrency")
	}
}

// insertComments inserts n comments numbered from first, with random (v4) keys, so that
// they fall before and after any cursor, and CommentCreated from 600 distinct seconds, so that
// the created order has ties. It returns their keys.
func insertComments(t testing.TB, st *engine.Store, c *engine.Resource, first, n int) map[string]bool {
	batch := 2_000
	if st.Dialect() == engine.SQLite {
		batch = 150 // SQLite's driver binds a statement's variables in quadratic time
	}
	ids := make(map[string]bool, n)
	user, org := uuid.NewString(), uuid.NewString()
	for start := 0; start < n; start += batch {
		drafts := make([]engine.Draft, 0, batch)
		for i := start; i < min(start+batch, n); i++ {
			id := uuid.NewString()
			ids[id] = true
			created, err := engine.ParseDateTime(fmt.Sprintf("2024-03-10T10:%02d:%02dZ", (first+i)%600/60, (first+i)%60))
			if err != nil {
				t.Error(err)
				return ids
			}
			d, err := c.DraftOf(map[string]any{"CommentIdentifier": id, "CommentCreatedBy": user, "OrganizationIdentifier": org,
				"UserIdentifier": user, "CommentText": fmt.Sprint("comment ", first+i),
				"CommentCreated": created})
			if err != nil {
				t.Error(err)
				return ids
			}
			drafts = append(drafts, d)
		}
		if err := st.InsertAll(context.Background(), c, drafts, engine.AllOrganizations()); err != nil {
			t.Error(err)
			return ids
		}
	}
	return ids
}

// TestContinueIsBoundToItsPartition: a token from one partition is a 400 in another, even for
// the same query of the same group.
func TestContinueIsBoundToItsPartition(t *testing.T) {
	reg := registry(t)
	c := reg.MustByName("UserComment")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p1, p2 := testenv.Partition(t), testenv.Partition(t)
			ts := newTestServer(t, b, reg, p1, p2)
			insertComments(t, ts.store, c, 0, 3)
			res := ts.do(t, "GET", c.Path+"?Take=1", "").expect(t, "first page", http.StatusOK)
			var pg struct{ Continuation string }
			_ = json.Unmarshal([]byte(res.header.Get("X-Query-Pagination")), &pg)
			if pg.Continuation == "" {
				t.Fatalf("no Continuation: %q", res.header.Get("X-Query-Pagination"))
			}
			ts.do(t, "GET", c.Path+"?Take=1&Continue="+pg.Continuation, "").expect(t, "same partition", http.StatusOK)
			there := &testServer{Server: ts.Server, store: ts.store, partition: p2}
			there.do(t, "GET", c.Path+"?Take=1&Continue="+pg.Continuation, "").
				expect(t, "another partition", http.StatusBadRequest).problemNames(t, "another partition", "Continue")
		})
	}
}
