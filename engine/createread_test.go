package engine_test

import (
	"context"
	"errors"
	"strings"
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

// TestCreateRequiresItsKey: a new record of a group keyed by more than a generated UUID
// (connections, instructors, accommodations, billing codes) must be given its key: omitted, a
// key member took its zero value (the nil UUID, ""), so that a create or `credo load` row
// without it wrote a record named by nothing anyone sent. Found by FuzzDraftRoundTrip.
func TestCreateRequiresItsKey(t *testing.T) {
	reg := loadGroups(t)
	const user = "0190a6f0-0000-7000-8000-00000000000a"
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		for _, tt := range []struct {
			resource string
			members  map[string]any
			missing  []string
		}{
			{resource: "UserConnection", members: map[string]any{"IsLeader": true}, missing: []string{"FromUserIdentifier", "ToUserIdentifier"}},
			{resource: "UserConnection", members: map[string]any{"FromUserIdentifier": user}, missing: []string{"ToUserIdentifier"}},
			{resource: "EventInstructor", members: map[string]any{"InstructorIdentifier": user}, missing: []string{"EventIdentifier"}},
			{resource: "Accommodation", members: map[string]any{"RegistrationIdentifier": user}, missing: []string{"AccommodationType"}},
		} {
			r := reg.MustByName(tt.resource)
			d, err := r.DraftOf(tt.members)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Create(ctx, r, d, engine.AllOrganizations())
			var verr *engine.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("%s %v: %v, want a ValidationError", tt.resource, tt.members, err)
			}
			for _, m := range tt.missing {
				if len(verr.Fields[m]) == 0 {
					t.Errorf("%s %v: %v does not name %s", tt.resource, tt.members, err, m)
				}
			}
			if n, err := s.Count(ctx, r, engine.Query{}, engine.AllOrganizations()); err != nil || n != 0 {
				t.Errorf("%s: %d records after refused creates (%v)", tt.resource, n, err)
			}
		}
		// A load (InsertFrom, as credo load) refuses the row too.
		ei := reg.MustByName("EventInstructor")
		d, err := ei.DraftOf(map[string]any{"InstructorIdentifier": user})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InsertAll(ctx, ei, []engine.Draft{d}, engine.AllOrganizations()); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "EventIdentifier") {
			t.Errorf("load of an instructor without its event: %v", err)
		}
	})
}
