package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/request"
)

// TestUserEmailIgnoresCase: a user's Email is unique in the partition ignoring ASCII case
// (users.yaml's `fold: ascii`). A second user whose Email differs from the first's only in
// case is the conflict a duplicate is, naming Email, on create, PUT, PATCH and load; the
// value is stored as sent; a Filter.Email stays exact (decisions §5), and MatchSame finds the
// user by any case.
func TestUserEmailIgnoresCase(t *testing.T) {
	reg := fixtureRegistry(t)
	users := reg.MustByName("User")
	email := mustMember(t, users, "Email")
	ctx := context.Background()
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ann := mustCreate(t, s, users, `{"Email":"Ann@Example.com","FullName":"Ann"}`)
		bob := mustCreate(t, s, users, `{"Email":"bob@example.com","FullName":"Bob"}`)
		annID, bobID := ann.Get(users, "UserIdentifier"), bob.Get(users, "UserIdentifier")
		if got := ann.Get(users, "Email"); got != "Ann@Example.com" {
			t.Errorf("stored Email %v, want it as sent", got)
		}
		conflict := func(what string, err error) {
			t.Helper()
			var verr *engine.ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, engine.ErrConflict) || strings.Join(verr.Members(), ",") != "Email" {
				t.Errorf("%s: %v, want a conflict naming Email", what, err)
			}
		}
		_, err := s.Create(ctx, users, draftOf(t, users, `{"Email":"ann@EXAMPLE.com"}`), engine.AllOrganizations())
		conflict("create", err)
		conflict("put", s.Update(ctx, users, []any{bobID}, draftOf(t, users, `{"Email":"ANN@example.com"}`), engine.AllOrganizations()))
		conflict("patch", s.Patch(ctx, users, []any{bobID}, draftOf(t, users, `{"Email":"ann@example.COM"}`), engine.AllOrganizations()))
		// Changing one's own Email's case is no conflict, and is stored as sent.
		if err := s.Patch(ctx, users, []any{annID}, draftOf(t, users, `{"Email":"ANN@example.com"}`), engine.AllOrganizations()); err != nil {
			t.Errorf("patch of the user's own Email's case: %v", err)
		}
		// Non-ASCII letters compare exactly: É and é are two Emails.
		mustCreate(t, s, users, `{"Email":"émile@example.com"}`)
		mustCreate(t, s, users, `{"Email":"Émile@example.com"}`)
		// Omitted Emails never collide.
		mustCreate(t, s, users, `{"FullName":"No Email 1"}`)
		mustCreate(t, s, users, `{"FullName":"No Email 2"}`)

		// A load: a row whose Email a stored user has in another case, and a row repeating an
		// earlier row's in another case, are the row problems of a duplicate.
		drafts, err := users.DecodeArray([]byte(`[{"Email":"carol@example.com"},{"Email":"bob@EXAMPLE.com"},{"Email":"CAROL@example.com"}]`))
		if err != nil {
			t.Fatal(err)
		}
		var bulk *engine.BulkError
		err = s.InsertAll(ctx, users, drafts, engine.AllOrganizations())
		if !errors.As(err, &bulk) {
			t.Fatalf("load: %v, want row problems", err)
		}
		var got []string
		for _, re := range bulk.Problems.List() {
			got = append(got, fmt.Sprintf("%d %s: %s", re.Row, re.Member, re.Msg))
		}
		want := []string{
			"1 Email: another User already has Email bob@EXAMPLE.com (stored as bob@example.com)",
			"2 Email: Email CAROL@example.com repeats row 0",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("load problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		// Filters stay exact; MatchSame finds by identity, any case, never by "".
		for _, tt := range []struct {
			name string
			q    engine.Query
			want int64
		}{
			{"filter, as stored", query(t, users, request.KindList, "Email=ANN@example.com"), 1},
			{"filter, other case", query(t, users, request.KindList, "Email=ann@example.com"), 0},
			{"same, other case", engine.Query{Conds: []engine.Cond{{Field: email, Op: engine.MatchSame, Value: []string{"aNN@exAMPLE.com", "BOB@example.com"}}}}, 2},
			{"same, one value", engine.Query{Conds: []engine.Cond{{Field: email, Op: engine.MatchSame, Value: "ann@example.com"}}}, 1},
			{"same, non-ASCII exact", engine.Query{Conds: []engine.Cond{{Field: email, Op: engine.MatchSame, Value: "ÉMILE@example.com"}}}, 1},
			{"same, empty", engine.Query{Conds: []engine.Cond{{Field: email, Op: engine.MatchSame, Value: []string{""}}}}, 0},
		} {
			n, err := s.Count(ctx, users, tt.q, engine.AllOrganizations())
			if err != nil || n != tt.want {
				t.Errorf("%s: %d, %v; want %d", tt.name, n, err, tt.want)
			}
		}
		n, _ := s.Count(ctx, users, engine.Query{}, engine.AllOrganizations())
		if n != 6 {
			t.Errorf("%d users after refused writes, want 6", n)
		}
	})
}

// TestFoldAgreesWithTheIndexes: the key a module and a load compare Emails by (Fold.Key) is
// the database's lower() of the unique index, on both stores, for letters whose lower case
// lies outside ASCII, or whose Unicode case folding reaches ASCII (the KELVIN SIGN, the
// dotted capital I, the long s), which the index keeps as they are.
func TestFoldAgreesWithTheIndexes(t *testing.T) {
	reg := fixtureRegistry(t)
	values := []string{"Ann@Example.COM", "ÉMILE@Ünï.example", "\u212Aelvin", "\u0130stanbul", "Cla\u017Fs", "STRASSE ß ẞ", "ΣΊΣΥΦΟΣ", "plain", "@[]_`{}"}
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		expr := "lower(?)"
		if strings.Contains(t.Name(), "postgres") {
			expr = `lower(CAST(? AS text) COLLATE "C")`
		}
		for _, v := range values {
			var got string
			if err := s.DB(context.Background()).Raw("SELECT "+expr, v).Scan(&got).Error; err != nil {
				t.Fatal(err)
			}
			if want := engine.FoldASCII.Key(v); got != want {
				t.Errorf("%q: the database folds to %q, Fold.Key to %q", v, got, want)
			}
		}
	})
}

func draftOf(t *testing.T, r *engine.Resource, body string) engine.Draft {
	t.Helper()
	d, err := r.DecodeDraft([]byte(body))
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return d
}
