package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/internal/testenv"
)

// TestSessionsReadCommittedWhateverTheDefault: on a database whose sessions default to
// REPEATABLE READ (default_transaction_isolation set by a DBA on the database), credo's
// statements and transactions still run READ COMMITTED, as they are designed and tested to:
// concurrent patches of one record, each reading it FOR UPDATE and writing it, all succeed,
// where under REPEATABLE READ each that waited for another's lock failed with a serialization
// failure (SQLSTATE 40001, a 503).
func TestSessionsReadCommittedWhateverTheDefault(t *testing.T) {
	url := testenv.NewDatabase(t, "")
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := admin.Config().Database
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" SET default_transaction_isolation = 'repeatable read'"); err != nil {
		t.Fatal(err)
	}
	// The setting holds for a session that does not choose: the test's premise.
	plain, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var level string
	if err := plain.QueryRow(ctx, "SHOW transaction_isolation").Scan(&level); err != nil || level != "repeatable read" {
		t.Fatalf("a plain session's isolation: %q, %v; want repeatable read", level, err)
	}
	plain.Close(ctx)

	reg := fixtureRegistry(t)
	p := testenv.Partition(t)
	db, err := engine.Open(ctx, url, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, _ := db.Store(p)
	if err := s.DB(ctx).Raw("SHOW transaction_isolation").Scan(&level).Error; err != nil || level != "read committed" {
		t.Errorf("a statement's isolation: %q, %v; want read committed", level, err)
	}
	err = s.Transaction(ctx, func(tx *engine.Store) error {
		return tx.DB(ctx).Raw("SHOW transaction_isolation").Scan(&level).Error
	})
	if err != nil || level != "read committed" {
		t.Errorf("a transaction's isolation: %q, %v; want read committed", level, err)
	}

	w := reg.MustByName("Widget")
	rec := mustCreate(t, s, w, widget("RC1", ""))
	key := []any{rec.Get(w, "WidgetIdentifier")}
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				d, err := w.DraftOf(map[string]any{"WidgetTitle": fmt.Sprintf("writer %d, patch %d", g, i)})
				if err == nil {
					err = s.Patch(ctx, w, key, d, engine.AllOrganizations())
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var aborted, other []string
	for err := range errs {
		if errors.Is(err, engine.ErrAborted) {
			aborted = append(aborted, err.Error())
		} else {
			other = append(other, err.Error())
		}
	}
	if len(aborted)+len(other) > 0 {
		t.Errorf("%d of %d concurrent patches aborted, %d failed otherwise: %s", len(aborted), writers*each, len(other),
			strings.Join(append(aborted[:min(len(aborted), 3)], other[:min(len(other), 3)]...), "; "))
	}
}
