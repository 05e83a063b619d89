package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/engine"
	"credo/internal/testenv"
)

// TestDiskFullIs503: a database with no space left for a change (SQLite's SQLITE_FULL, as a
// full file system gives it; PostgreSQL's disk_full, SQLSTATE 53100) answers the write 503
// with Retry-After and a problem document saying so, never 500, writes nothing of it, and
// serves reads meanwhile; once there is space again the same write succeeds, without a
// restart. SQLite's limit is the writer connection's max_page_count (the file cannot grow, as
// on a full disk); PostgreSQL's a trigger that raises the disk_full SQLSTATE.
func TestDiskFullIs503(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, registry(t))
			ctx := context.Background()
			r := ts.store.Registry().MustByName("UserComment")
			count := func() int64 {
				var n int64
				if err := ts.store.DB(ctx).Table(ts.store.TableName(r)).Count(&n).Error; err != nil {
					t.Fatal(err)
				}
				return n
			}
			org, user := uuid.NewString(), uuid.NewString()
			body := func(i int) string {
				return fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"%d%s"}`,
					user, org, user, i, strings.Repeat("x", 3900))
			}
			ts.do(t, "POST", "security/users-comments", body(0)).expect(t, "create before", http.StatusCreated)
			fill, free := diskFull(t, ts)
			fill()
			var full response
			written := 0
			for i := 1; i <= 200; i++ {
				before := count()
				full = ts.do(t, "POST", "security/users-comments", body(i))
				if full.status != http.StatusCreated {
					if after := count(); after != before {
						t.Errorf("the refused create wrote %d rows", after-before)
					}
					break
				}
				written++
			}
			if full.status != http.StatusServiceUnavailable {
				t.Fatalf("create on a full database (after %d written): %d %s, want 503", written, full.status, full.body)
			}
			var prob struct {
				Status int
				Detail string
			}
			if err := json.Unmarshal(full.body, &prob); err != nil || prob.Status != 503 || !strings.Contains(prob.Detail, "no space") ||
				!strings.HasSuffix(prob.Detail, "nothing was written; reads are served; retry later.") {
				t.Errorf("problem %s, want a 503 whose Detail says the database has no space left, that nothing was written and that reads are served", full.body)
			}
			if full.header.Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After: %v", full.header)
			}
			ts.do(t, "GET", "security/users-comments?Take=5", "").expect(t, "read while full", http.StatusOK)
			free()
			ts.do(t, "POST", "security/users-comments", body(1000)).expect(t, "create once space is freed", http.StatusCreated)
		})
	}
}

// diskFull returns functions that make the test server's partition refuse to grow, as a full
// disk does, and that free it again.
func diskFull(t *testing.T, ts *testServer) (fill, free func()) {
	t.Helper()
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if err := ts.store.DB(ctx).Exec(sql).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if ts.store.Dialect() == engine.SQLite {
		// max_page_count cannot go below the file's size: 1 sets it to the current one.
		return func() { exec("PRAGMA max_page_count = 1") }, func() { exec("PRAGMA max_page_count = 4294967294") }
	}
	r := ts.store.Registry().MustByName("UserComment")
	fn := fmt.Sprintf("%q.credo_disk_full", ts.partition)
	return func() {
			exec("CREATE FUNCTION " + fn + "() RETURNS trigger LANGUAGE plpgsql AS " +
				"$$BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END$$")
			exec("CREATE TRIGGER credo_disk_full BEFORE INSERT ON " + ts.store.Table(r) + " FOR EACH ROW EXECUTE FUNCTION " + fn + "()")
		}, func() {
			exec("DROP TRIGGER credo_disk_full ON " + ts.store.Table(r))
			exec("DROP FUNCTION " + fn + "()")
		}
}

// TestReadOnlySQLiteIs503: a SQLite file that cannot be written (SQLITE_READONLY: a file or
// folder made read-only, a read-only file system; here the writer connection's query_only,
// which fails writes with the same code) answers a write 503, never 500, and serves it again
// once the file can be written. Only SQLite has files.
func TestReadOnlySQLiteIs503(t *testing.T) {
	ts := newTestServer(t, testenv.Backends(t)[0], registry(t))
	exec := func(sql string) {
		t.Helper()
		if err := ts.store.DB(context.Background()).Exec(sql).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	org, user := uuid.NewString(), uuid.NewString()
	body := fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"ro"}`, user, org, user)
	exec("PRAGMA query_only = 1")
	res := ts.do(t, "POST", "security/users-comments", body)
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
		t.Errorf("create on a read-only file: %d %v %s, want 503 with Retry-After", res.status, res.header, res.body)
	}
	exec("PRAGMA query_only = 0")
	ts.do(t, "POST", "security/users-comments", body).expect(t, "create once the file can be written", http.StatusCreated)
}
