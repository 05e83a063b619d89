package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"credo/engine"
)

// TestCreateAnswersWhatItCommitted: a create of a record with computed members reads it back
// for its answer; a concurrent delete of the new key (a client may choose it) between the
// commit and that read made a create that had committed answer 404, and a 4xx releases its
// Idempotency-Key, so a retry created the record again. Real goroutines race a deleter against
// each create; no create may answer 404.
func TestCreateAnswersWhatItCommitted(t *testing.T) {
	reg := loadGroups(t)
	perm := reg.MustByName("Permission")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		const rounds = 200
		var notFound, deleted atomic.Int64
		for i := range rounds {
			id := engine.NewID()
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if n, err := s.DeleteWhere(ctx, perm, "PermissionIdentifier", id); err == nil && n > 0 {
						deleted.Add(1)
						return
					}
				}
			}()
			d, err := perm.DraftOf(map[string]any{"PermissionIdentifier": id, "GroupIdentifier": engine.NewID(),
				"ObjectIdentifier": engine.NewID(), "AllowRead": true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Create(ctx, perm, d, engine.AllOrganizations())
			close(stop)
			<-done
			switch {
			case errors.Is(err, engine.ErrNotFound):
				notFound.Add(1)
			case err != nil:
				t.Fatalf("round %d: %v", i, err)
			}
		}
		t.Logf("%d creates, %d deleted at once, %d answered 404", rounds, deleted.Load(), notFound.Load())
		if notFound.Load() > 0 {
			t.Errorf("%d of %d creates answered 404 though they committed", notFound.Load(), rounds)
		}
	})
}
