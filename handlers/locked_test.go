package handlers_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"credo/engine"
	"credo/internal/groupsuite"
	"credo/internal/testenv"
)

// TestLockHeldPastTheTimeout: a patch of a record that another transaction holds locked for
// longer than --database-timeout (1s here) is a 503 with Retry-After whose Detail says that
// another writer held it, and for how long: the PostgreSQL row locked by an open transaction
// (the session's lock_timeout, SQLSTATE 55P03), SQLite's writer held by another request's
// transaction, and SQLite's file held for writing by another process (busy_timeout,
// SQLITE_BUSY). It said "The database is unavailable", which sent an operator looking for a
// database that answers: a get meanwhile is a 200. The failure is logged as the request's, with
// its id, not as the partition's database being unavailable. Once the lock is released, the
// same patch succeeds.
func TestLockHeldPastTheTimeout(t *testing.T) {
	const timeout = time.Second
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := newObservedWithin(t, b.URL, engine.Limits{Timeout: timeout})
			ctx := context.Background()
			actions := o.store.Registry().MustByName("PlatformAction")
			name, _ := actions.Member("ActionName")
			key, _ := actions.Member("ActionIdentifier")
			s := &groupsuite.Server{URL: o.URL, Partition: o.partition, Client: o.Client(), Store: o.store,
				Header: http.Header{"Authorization": {"Bearer good"}}}
			got := groupsuite.Put(t, s, actions, sample(actions, 1))
			item := itemPath(actions, got)

			// holds returns what holds a lock on the record until its release is called.
			type holder struct {
				name   string
				hold   func(t *testing.T) (release func())
				detail []string
			}
			holders := []holder{{
				name: "another transaction",
				hold: func(t *testing.T) func() {
					locked, release, done := make(chan error, 1), make(chan struct{}), make(chan struct{})
					go func() {
						defer close(done)
						err := o.store.Transaction(ctx, func(tx *engine.Store) error {
							err := tx.DB(ctx).Exec("UPDATE "+tx.Table(actions)+" SET "+name.Column+" = 'held' WHERE "+key.Column+" = ?", got["ActionIdentifier"]).Error
							locked <- err
							if err == nil {
								<-release
							}
							return err
						})
						if err != nil {
							t.Errorf("the transaction holding the record: %v", err)
						}
					}()
					if err := <-locked; err != nil {
						t.Fatal(err)
					}
					return func() { close(release); <-done }
				},
			}}
			if o.store.Dialect() == engine.Postgres {
				holders[0].detail = []string{"Another transaction held a lock the request needed", "for more than 900ms"}
			} else {
				holders[0].detail = []string{"Another writer held the database for more than 1s"}
				holders = append(holders, holder{
					name: "another process",
					hold: func(t *testing.T) func() {
						file := filepath.Join(strings.TrimPrefix(b.URL, "sqlite:"), o.partition+".db")
						db, err := sql.Open("sqlite", file)
						if err != nil {
							t.Fatal(err)
						}
						conn, err := db.Conn(ctx)
						if err != nil {
							t.Fatal(err)
						}
						if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
							t.Fatal(err)
						}
						return func() {
							if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
								t.Error(err)
							}
							conn.Close()
							db.Close()
						}
					},
					detail: []string{"Another process", "held the partition's database file for writing for more than 1s"},
				})
			}
			for _, h := range holders {
				t.Run(h.name, func(t *testing.T) {
					release := h.hold(t)
					start := time.Now()
					res := s.Do(t, "PATCH", item, `{"ActionName":"patched"}`)
					took := time.Since(start)
					s.Do(t, "GET", item, "").Expect(t, "get while the record is held", http.StatusOK)
					release()
					response{status: res.Status, header: res.Header, body: res.Body}.expect(t, "patch while the record is held", http.StatusServiceUnavailable)
					if took < timeout*8/10 || took > timeout+1500*time.Millisecond { // slack for a loaded two-CPU machine
						t.Errorf("the patch answered after %v, want about %v", took, timeout)
					}
					if ra := res.Header.Get("Retry-After"); ra == "" {
						t.Error("no Retry-After")
					}
					var doc struct{ Detail, RequestId string }
					if err := json.Unmarshal(res.Body, &doc); err != nil {
						t.Fatal(err)
					}
					t.Logf("%s", res.Body)
					for _, want := range h.detail {
						if !strings.Contains(doc.Detail, want) {
							t.Errorf("Detail %q does not say %q", doc.Detail, want)
						}
					}
					if strings.Contains(doc.Detail, "unavailable") {
						t.Errorf("Detail %q says that the database is unavailable", doc.Detail)
					}
					if lines := o.log.lines(t, "request failed", doc.RequestId); len(lines) != 1 || lines[0]["level"] != "ERROR" {
						t.Errorf("the patch's failure is not logged once as the request's: %v\n%s", lines, o.log.String())
					}
					if n := len(o.log.lines(t, "database unavailable", "")); n != 0 {
						t.Errorf("a lock held past the timeout is logged as the database unavailable:\n%s", o.log.String())
					}
					s.Do(t, "PATCH", item, `{"ActionName":"patched"}`).Expect(t, "patch once the record is released", http.StatusOK)
				})
			}
		})
	}
}
