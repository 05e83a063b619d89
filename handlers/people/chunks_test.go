package people_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"credo/engine"
)

// chunkedRows is an import longer than the engine's bulk load chunk (5,000 rows), whose
// drafts the import builds as the load reads them: the rows past the first chunk are
// written, and their problems named by their file row.
const chunkedRows = 6000

func TestImportLongerThanAChunk(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		if rec := post(t, st, operatorA, encode(t, goodRows(chunkedRows)), "application/json"); rec.Code != http.StatusOK {
			t.Fatalf("import: %d %s", rec.Code, rec.Body)
		}
		// Row 5 is an existing user; every even row has a Location; rows 4k+3 no manager.
		want := counts{before.users + chunkedRows - 1, before.persons + chunkedRows, before.fields + chunkedRows/2, before.conns + chunkedRows*3/4}
		if got := count(t, st); got != want {
			t.Errorf("after import %+v, want %+v", got, want)
		}
		reg, _ := registry()
		ctx := context.Background()
		person, user, field, conn := reg.MustByName("Person"), reg.MustByName("User"), reg.MustByName("PersonField"), reg.MustByName("UserConnection")
		last := chunkedRows - 2 // an even row with a Location, managed by the row before it
		p, err := st.Get(ctx, person, []any{pid(last)}, nil, engine.Organization(orgA))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.Get(person, "FullName"), fmt.Sprintf("First%d Last, \"Q\"", last); got != want {
			t.Errorf("row %d's FullName %v, want %v", last, got, want)
		}
		uid := userOf(t, st, last)
		u, err := st.Get(ctx, user, []any{uid}, nil, engine.AllOrganizations())
		if err != nil || u.Get(user, "Email") != fmt.Sprintf("person%04d@example.com", last) {
			t.Errorf("row %d's user: %v, %v", last, u, err)
		}
		userIDs, _ := reg.MustByName("PersonField").Member("UserIdentifier")
		n, err := st.Count(ctx, field, engine.Query{Conds: []engine.Cond{{Field: userIDs, Op: engine.MatchIn, Value: []string{uid}}}}, engine.AllOrganizations())
		if err != nil || n != 1 {
			t.Errorf("row %d's fields: %d, %v; want its Location", last, n, err)
		}
		c, err := st.Get(ctx, conn, []any{userOf(t, st, last-1), uid}, nil, engine.AllOrganizations())
		if err != nil || c.Get(conn, "IsManager") != true {
			t.Errorf("row %d's manager connection: %v, %v", last, c, err)
		}
	})
}

// TestImportChunkProblemsNameFileRows: an Identifier that is already the PersonCode of a
// person of the organization (the import sets a person's PersonCode to its Identifier), in
// the first chunk of the engine's bulk load or in the second, is a problem of its row in the
// import's terms — the column Identifier, the file row — where the bulk load reported it under
// OrganizationIdentifier in its own words ("Person another Person already has
// OrganizationIdentifier, PersonCode …"); nothing is written. A person whose PersonIdentifier
// is the Identifier is reported once, as taken, whatever its PersonCode.
func TestImportChunkProblemsNameFileRows(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		const early, late, both = 17, 5432, 5999
		create(t, st, "User", `{"UserIdentifier":"0190a6f0-0000-7000-8000-0000000000e0","Email":"coder@example.com"}`)
		create(t, st, "User", `{"UserIdentifier":"0190a6f0-0000-7000-8000-0000000000e1","Email":"twice@example.com"}`)
		create(t, st, "Person", `{"UserIdentifier":"`+adminID+`","OrganizationIdentifier":"`+orgA+`","PersonCode":"`+pid(early)+`"}`)
		create(t, st, "Person", `{"UserIdentifier":"0190a6f0-0000-7000-8000-0000000000e0","OrganizationIdentifier":"`+orgA+`","PersonCode":"`+pid(late)+`"}`)
		create(t, st, "Person", `{"PersonIdentifier":"`+pid(both)+`","UserIdentifier":"0190a6f0-0000-7000-8000-0000000000e1","OrganizationIdentifier":"`+orgA+`","PersonCode":"`+pid(both)+`"}`)
		// A PersonCode of another organization is no problem.
		create(t, st, "Person", `{"UserIdentifier":"`+adminID+`","OrganizationIdentifier":"`+orgB+`","PersonCode":"`+pid(3)+`"}`)
		before := count(t, st)
		errs := problemOf(t, post(t, st, operatorA, encode(t, goodRows(chunkedRows)), "application/json"), http.StatusBadRequest)
		code := func(row int) string {
			return fmt.Sprintf("Identifier %s is already the PersonCode of a person of your organization, and an imported person's PersonCode is its Identifier (%d)", pid(row), row)
		}
		want := map[string][]string{"Identifier": {code(early), code(late), fmt.Sprintf("Identifier %s is already the identifier of a person (%d)", pid(both), both)}}
		if fmt.Sprint(errs) != fmt.Sprint(want) {
			t.Errorf("errors:\n got %v\nwant %v", errs, want)
		}
		if got := count(t, st); got != before {
			t.Errorf("after a refused import %+v, want %+v", got, before)
		}
	})
}
