package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestCommit: a Commit that a context carries is written once, by the first transaction that
// commits on that context, after the work and in its transaction: a create that needs no
// transaction of its own takes one, Write is told of the record of Of it stored, a Write
// error rolls the work back, and a later transaction does not write it again.
func TestCommit(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		for _, r := range []*engine.Resource{w, reg.MustByName("UserComment")} {
			t.Run(r.Name, func(t *testing.T) {
				var writes int
				var seen engine.Record
				c := &engine.Commit{Of: r, Write: func(ctx context.Context, tx *engine.Store, created engine.Record) error {
					writes++
					seen = created
					// The work is visible to Write: it runs in the work's transaction.
					_, err := tx.Get(ctx, r, keyOf(r, created), nil, engine.AllOrganizations())
					return err
				}}
				cctx := engine.WithCommit(ctx, c)
				rec, err := testenv.CreateJSON(cctx, s, r, []byte(bodyOf(r, "C1")), engine.AllOrganizations())
				if err != nil {
					t.Fatal(err)
				}
				if writes != 1 || !c.Committed() || seen == nil || keyOf(r, seen)[0] != keyOf(r, rec)[0] {
					t.Fatalf("after the create: %d writes, committed %v, told of %v; created %v", writes, c.Committed(), seen, rec)
				}
				if err := s.Transaction(cctx, func(*engine.Store) error { return nil }); err != nil || writes != 1 {
					t.Fatalf("a later transaction: %v, %d writes, want 1", err, writes)
				}
			})
		}

		before := count(t, s, w)
		refused := errors.New("refused")
		c := &engine.Commit{Of: w, Write: func(context.Context, *engine.Store, engine.Record) error { return refused }}
		cctx := engine.WithCommit(ctx, c)
		if _, err := testenv.CreateJSON(cctx, s, w, []byte(widget("C2", "")), engine.AllOrganizations()); !errors.Is(err, refused) {
			t.Fatalf("a create whose Commit fails: %v, want %v", err, refused)
		}
		err := s.Transaction(cctx, func(tx *engine.Store) error {
			_, err := testenv.CreateJSON(cctx, tx, w, []byte(widget("C3", "")), engine.AllOrganizations())
			return err
		})
		if !errors.Is(err, refused) || c.Committed() || count(t, s, w) != before {
			t.Fatalf("a transaction whose Commit fails: %v, committed %v, %d widgets, want %d", err, c.Committed(), count(t, s, w), before)
		}

		// Nested transactions write it once, in the outermost, told of the first record of Of.
		var writes int
		var seen engine.Record
		c = &engine.Commit{Of: w, Write: func(_ context.Context, _ *engine.Store, created engine.Record) error {
			writes++
			seen = created
			return nil
		}}
		cctx = engine.WithCommit(ctx, c)
		var first engine.Record
		err = s.Transaction(cctx, func(tx *engine.Store) error {
			return tx.Transaction(cctx, func(tx *engine.Store) error {
				var err error
				if first, err = testenv.CreateJSON(cctx, tx, w, []byte(widget("C4", "")), engine.AllOrganizations()); err != nil {
					return err
				}
				_, err = testenv.CreateJSON(cctx, tx, w, []byte(widget("C5", "")), engine.AllOrganizations())
				return err
			})
		})
		if err != nil || writes != 1 || seen == nil || keyOf(w, seen)[0] != keyOf(w, first)[0] {
			t.Fatalf("nested: %v, %d writes, told of %v, first %v", err, writes, seen, first)
		}
	})
}

// TestCommitSavepoint: a record of Of that a nested transaction (a savepoint) inserted and
// rolled back is not the record Write is told of: the work that commits is what it is told of,
// the record inserted after the savepoint's rollback, so that the retry of a create whose
// answer was lost is answered with a record that exists.
func TestCommitSavepoint(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		var seen engine.Record
		c := &engine.Commit{Of: w, Write: func(_ context.Context, _ *engine.Store, created engine.Record) error {
			seen = created
			return nil
		}}
		cctx := engine.WithCommit(context.Background(), c)
		undone := errors.New("undone")
		var kept engine.Record
		err := s.Transaction(cctx, func(tx *engine.Store) error {
			err := tx.Transaction(cctx, func(tx *engine.Store) error {
				if _, err := testenv.CreateJSON(cctx, tx, w, []byte(widget("S1", "")), engine.AllOrganizations()); err != nil {
					return err
				}
				return undone
			})
			if !errors.Is(err, undone) {
				return fmt.Errorf("the savepoint: %v, want %v", err, undone)
			}
			kept, err = testenv.CreateJSON(cctx, tx, w, []byte(widget("S2", "")), engine.AllOrganizations())
			return err
		})
		if err != nil || !c.Committed() {
			t.Fatalf("the transaction: %v, committed %v", err, c.Committed())
		}
		if seen == nil || keyOf(w, seen)[0] != keyOf(w, kept)[0] {
			t.Fatalf("Write was told of %v, want the record that committed, %v", seen, kept)
		}
	})
}

// TestSetMatching: one UPDATE of the members given on the records the conditions match,
// counted; a key member cannot be set.
func TestSetMatching(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		mustCreate(t, s, w, widget("S1", ""))
		mustCreate(t, s, w, widget("S2", ""))
		code, _ := w.Member("WidgetCode")
		title, _ := w.Member("WidgetTitle")
		n, err := s.SetMatching(ctx, w, engine.Query{Conds: []engine.Cond{{Field: code, Op: engine.MatchEq, Value: "S1"}}},
			map[*engine.Field]any{title: "set"}, engine.AllOrganizations())
		if err != nil || n != 1 {
			t.Fatalf("set S1: %d, %v; want 1", n, err)
		}
		recs, _, err := s.List(ctx, w, engine.Query{Conds: []engine.Cond{{Field: title, Op: engine.MatchEq, Value: "set"}}, Take: 10,
			Fields: []*engine.Field{code}},
			engine.AllOrganizations())
		if err != nil || len(recs) != 1 || recs[0][code.Index] != "S1" {
			t.Fatalf("widgets titled set: %v, %v", recs, err)
		}
		if n, err := s.SetMatching(ctx, w, engine.Query{Conds: []engine.Cond{{Field: code, Op: engine.MatchEq, Value: "none"}}},
			map[*engine.Field]any{title: "set"}, engine.AllOrganizations()); err != nil || n != 0 {
			t.Fatalf("set none: %d, %v; want 0", n, err)
		}
		if _, err := s.SetMatching(ctx, w, engine.Query{}, map[*engine.Field]any{w.Key[0]: "x"}, engine.AllOrganizations()); err == nil {
			t.Fatal("a key member was set")
		}
	})
}

func keyOf(r *engine.Resource, rec engine.Record) []any {
	key := make([]any, len(r.Key))
	for i, k := range r.Key {
		key[i] = rec[k.Index]
	}
	return key
}

func count(t *testing.T, s *engine.Store, r *engine.Resource) int64 {
	t.Helper()
	n, err := s.Count(context.Background(), r, engine.Query{}, engine.AllOrganizations())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// bodyOf is a create body of a Widget or a UserComment.
func bodyOf(r *engine.Resource, code string) string {
	if r.Name == "Widget" {
		return widget(code, "")
	}
	return `{"CommentCreatedBy":"0190a6f0-0000-7000-8000-000000000001","OrganizationIdentifier":"` + wOrgA +
		`","UserIdentifier":"0190a6f0-0000-7000-8000-000000000003","CommentText":"` + code + `","CommentCreated":"2024-01-01T00:00:00Z"}`
}
