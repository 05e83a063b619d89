package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestSQLiteTransactionsBeginImmediate checks, rather than assumes, what the engine's
// read-merge-writes rely on for SQLite: a store transaction holds the database's write lock
// from its BEGIN, before it has written anything, so no other writer can slip in between its
// read and its write.
func TestSQLiteTransactionsBeginImmediate(t *testing.T) {
	reg := fixtureRegistry(t)
	dir := t.TempDir()
	db, err := engine.Open(context.Background(), "sqlite:"+dir, []string{"p1"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := db.Store("p1")
	w := reg.MustByName("Widget")
	rec := mustCreate(t, s, w, widget("L1", ""))

	other, err := sql.Open("sqlite", filepath.Join(dir, "p1.db")+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otherWriter := func() error {
		tx, err := other.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		_, err = tx.Exec(`UPDATE widgets SET widget_title = 'other' WHERE 0`)
		return err
	}
	if err := otherWriter(); err != nil {
		t.Fatalf("a writer outside any transaction: %v", err)
	}
	err = s.Transaction(context.Background(), func(tx *engine.Store) error {
		if _, err := tx.Get(context.Background(), w, []any{rec.Get(w, "WidgetIdentifier")}, nil, engine.AllOrganizations()); err != nil {
			return err
		}
		// Only read so far: another writer must already be shut out.
		if err := otherWriter(); err == nil || !strings.Contains(err.Error(), "locked") {
			return fmt.Errorf("another writer during a transaction that has only read: %v, want database is locked", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := otherWriter(); err != nil {
		t.Fatalf("another writer after the transaction: %v", err)
	}
}

// TestDeleteHookSeesTheRowItDeletes: a membership deleted while another request patches its
// group is recorded (MembershipDeletion) with the group it had when it was deleted. Counted
// over 40 races per store: a delete whose hook read the row before the patch committed, and
// deleted it after, would record the old group although the patch succeeded.
func TestDeleteHookSeesTheRowItDeletes(t *testing.T) {
	const races = 40
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	m, del := reg.MustByName("Membership"), reg.MustByName("MembershipDeletion")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		wrong := 0
		for i := range races {
			oldGroup, newGroup := uuid.NewString(), uuid.NewString()
			rec := mustCreate(t, s, m, fmt.Sprintf(`{"GroupIdentifier":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q}`,
				oldGroup, wOrgA, uuid.NewString()))
			key := []any{rec.Get(m, "MembershipIdentifier")}
			var patchErr, deleteErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				patchErr = testenv.PatchJSON(ctx, s, m, key, []byte(fmt.Sprintf(`{"GroupIdentifier":%q}`, newGroup)), engine.AllOrganizations())
			}()
			go func() {
				defer wg.Done()
				deleteErr = s.Delete(ctx, m, key, engine.AllOrganizations())
			}()
			wg.Wait()
			if deleteErr != nil {
				t.Fatalf("race %d: delete: %v", i, deleteErr)
			}
			if patchErr != nil && !errors.Is(patchErr, engine.ErrNotFound) {
				t.Fatalf("race %d: patch: %v", i, patchErr)
			}
			q := engine.Query{Conds: []engine.Cond{{Field: mustMember(t, del, "MembershipIdentifier"), Op: engine.MatchEq, Value: key[0]}},
				Fields: del.Output, Take: 10, Page: 1}
			recs, _, err := s.List(ctx, del, q, engine.AllOrganizations())
			if err != nil || len(recs) != 1 {
				t.Fatalf("race %d: deletion records %v, %v; want 1", i, recs, err)
			}
			recorded := recs[0].Get(del, "GroupIdentifier")
			if (patchErr == nil && recorded != newGroup) || (patchErr != nil && recorded != oldGroup) {
				wrong++
			}
		}
		if wrong > 0 {
			t.Fatalf("%d of %d deletions recorded a group the membership no longer had", wrong, races)
		}
	})
}

func mustMember(t *testing.T, r *engine.Resource, name string) *engine.Field {
	t.Helper()
	f, ok := r.Member(name)
	if !ok {
		t.Fatalf("%s has no member %s", r.Name, name)
	}
	return f
}

// TestSQLiteWriterTakesTurns: on SQLite every write and transaction runs on the partition's
// one writer connection, in turn. While a transaction holds it, reads go on (on the read
// pool) and another write waits for its turn at most the store's timeout, then fails as
// unavailable (503), as a lock held that long by another process does.
func TestSQLiteWriterTakesTurns(t *testing.T) {
	reg := fixtureRegistry(t)
	db, err := engine.Limits{Timeout: 300 * time.Millisecond}.Open(context.Background(), "sqlite:"+t.TempDir(), []string{"p1"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := db.Store("p1")
	w := reg.MustByName("Widget")
	ctx := context.Background()
	rec := mustCreate(t, s, w, widget("T1", ""))
	key := []any{rec.Get(w, "WidgetIdentifier")}
	err = s.Transaction(ctx, func(tx *engine.Store) error {
		if _, err := tx.Get(ctx, w, key, nil, engine.AllOrganizations()); err != nil {
			return err
		}
		if _, err := s.Get(ctx, w, key, nil, engine.AllOrganizations()); err != nil {
			return fmt.Errorf("a read while a transaction holds the writer: %w", err)
		}
		if _, err := testenv.CreateJSON(ctx, s, w, []byte(widget("T2", "")), engine.AllOrganizations()); !errors.Is(err, engine.ErrUnavailable) {
			return fmt.Errorf("a write while a transaction holds the writer: %v, want ErrUnavailable", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.CreateJSON(ctx, s, w, []byte(widget("T3", "")), engine.AllOrganizations()); err != nil {
		t.Fatalf("a write after the transaction: %v", err)
	}
	if n, err := s.Count(ctx, w, engine.Query{}, engine.AllOrganizations()); err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2 (T1 and T3)", n, err)
	}
}
