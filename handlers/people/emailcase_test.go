package people_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"credo/engine"
)

// TestImportMatchesEmailsIgnoringCase: an Email is one user whatever its case (the users'
// unique constraint folds ASCII case). A row whose Email a stored user has in another case
// reuses that user, which keeps its Email as stored; a Manager names a stored user or a row
// in any case; a row repeating another row's Email in another case, a Manager that is the
// row's own Email in another case, and another organization's user in another case are the
// problems they are in the same case. A new user keeps the case the row sent.
func TestImportMatchesEmailsIgnoringCase(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		bad := []row{
			{"Identifier": pid(1), "Email": "new@example.com", "FirstName": "N", "LastName": "Ew"},
			{"Identifier": pid(2), "Email": "NEW@Example.com", "FirstName": "N", "LastName": "Ew"},
			{"Identifier": pid(3), "Email": "Third@example.com", "FirstName": "T", "LastName": "Hird", "Manager": "third@EXAMPLE.com"},
			{"Identifier": pid(4), "Email": "OTHER@example.com", "FirstName": "O", "LastName": "Ther"},
		}
		errs := problemOf(t, post(t, st, callerA, encode(t, bad), ""), http.StatusBadRequest)
		want := map[string][]string{
			"Email":   {"Email NEW@Example.com is also the Email of row 0 (1)", "Email OTHER@example.com is already in use (3)"},
			"Manager": {"Manager third@EXAMPLE.com is the row's own Email (2)"},
		}
		if fmt.Sprint(errs) != fmt.Sprint(want) {
			t.Errorf("errors:\n got %v\nwant %v", errs, want)
		}
		if got := count(t, st); got != before {
			t.Fatalf("after a refused import %+v, want %+v", got, before)
		}

		rows := []row{
			// admin@example.com has no person yet: the row reuses the user (an operator may
			// link a user from outside the organization; decisions §11).
			{"Identifier": pid(1), "Email": "Admin@Example.COM", "FirstName": "A", "LastName": "Dmin", "Manager": "BOSS@example.com"},
			{"Identifier": pid(2), "Email": "New.Person@Example.com", "FirstName": "N", "LastName": "Ew", "Manager": "admin@EXAMPLE.com"},
		}
		if rec := post(t, st, operatorA, encode(t, rows), ""); rec.Code != http.StatusOK {
			t.Fatalf("import: %d %s", rec.Code, rec.Body)
		}
		want2 := counts{before.users + 1, before.persons + 2, before.fields, before.conns + 2}
		if got := count(t, st); got != want2 {
			t.Errorf("after the import %+v, want %+v (one new user)", got, want2)
		}
		reg, _ := registry()
		ctx := context.Background()
		users, conn := reg.MustByName("User"), reg.MustByName("UserConnection")
		if userOf(t, st, 1) != adminID {
			t.Errorf("row 0's person has user %s, want the stored %s", userOf(t, st, 1), adminID)
		}
		for id, email := range map[string]string{adminID: "admin@example.com", userOf(t, st, 2): "New.Person@Example.com"} {
			u, err := st.Get(ctx, users, []any{id}, nil, engine.AllOrganizations())
			if err != nil || u.Get(users, "Email") != email {
				t.Errorf("user %s: %v, %v; want Email %s", id, u, err, email)
			}
		}
		for _, c := range []struct{ from, to string }{{bossID, adminID}, {adminID, userOf(t, st, 2)}} {
			rec, err := st.Get(ctx, conn, []any{c.from, c.to}, nil, engine.AllOrganizations())
			if err != nil || rec.Get(conn, "IsManager") != true {
				t.Errorf("manager connection %s → %s: %v, %v", c.from, c.to, rec, err)
			}
		}
	})
}
