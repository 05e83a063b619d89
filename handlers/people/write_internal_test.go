package people

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestWriteNamesFileRows: a problem the engine finds as an import writes — a user, person or
// connection that another writer stored after the import looked them up — is a problem of the
// file row and the import's column that the record comes from, in the batches that make no
// record for some rows (users: a row of an existing user; connections: a row without a
// manager) as in the persons' (one a row), past the bulk load's first chunk of 5,000 records
// too; nothing is written (both stores). The rows are numbered as in the file, not as the
// records of a batch: in the users' batch row 3 (an existing user's) has no record, so file
// row 5432 is its record 5431, and file row 5999 is the connections' record 0. (The person
// fields' batch, which skips the rows without a Location, has no record the engine refuses:
// no unique constraint, no reference, no rule, a new key.)
func TestWriteNamesFileRows(t *testing.T) {
	const (
		orgA    = "0190a6f0-0000-7000-8000-00000000000a"
		orgB    = "0190a6f0-0000-7000-8000-00000000000b"
		bossID  = "0190a6f0-0000-7000-8000-0000000000b0"
		otherID = "0190a6f0-0000-7000-8000-0000000000c0"
		spareID = "0190a6f0-0000-7000-8000-0000000000e0"
		n       = 6000
	)
	pid := func(i int) string { return fmt.Sprintf("0190a6f0-0000-7000-9000-%012d", i) }
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	m := &model{}
	if err := m.resolve(reg); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	create := func(t *testing.T, st *engine.Store, name, body string) {
		t.Helper()
		if _, err := testenv.CreateJSON(ctx, st, reg.MustByName(name), []byte(body), engine.AllOrganizations()); err != nil {
			t.Fatalf("create %s %s: %v", name, body, err)
		}
	}
	rows := func() []Row {
		rows := make([]Row, n)
		for i := range rows {
			rows[i] = Row{Identifier: pid(i), Email: fmt.Sprintf("person%04d@example.com", i), FirstName: "F", LastName: "L"}
			if i%3 == 0 {
				rows[i].Location = "Edmonton"
			}
		}
		rows[3].Email = "spare@example.com"                                          // an existing user: no User record
		rows[n-1].Email, rows[n-1].Manager = "other@example.com", "boss@example.com" // the one manager
		return rows
	}
	for _, c := range []struct {
		name string
		// meddle runs between the import's lookups and its write.
		meddle func(t *testing.T, st *engine.Store)
		want   map[string][]string
	}{
		{name: "users", meddle: func(t *testing.T, st *engine.Store) {
			create(t, st, "User", `{"Email":"person5432@example.com"}`)
		}, want: map[string][]string{"Email": {"the row's User: another User already has Email person5432@example.com (5432)"}}},
		{name: "persons", meddle: func(t *testing.T, st *engine.Store) {
			create(t, st, "User", `{"UserIdentifier":"0190a6f0-0000-7000-8000-0000000000f0","Email":"coder@example.com"}`)
			create(t, st, "Person", `{"UserIdentifier":"0190a6f0-0000-7000-8000-0000000000f0","OrganizationIdentifier":"`+orgA+`","PersonCode":"`+pid(5434)+`"}`)
		}, want: map[string][]string{"Identifier": {fmt.Sprintf("the row's Person: another Person already has OrganizationIdentifier, PersonCode %s, %s (5434)", orgA, pid(5434))}}},
		{name: "connections", meddle: func(t *testing.T, st *engine.Store) {
			create(t, st, "UserConnection", `{"FromUserIdentifier":"`+bossID+`","ToUserIdentifier":"`+otherID+`"}`)
		}, want: map[string][]string{"Manager": {fmt.Sprintf("the row's UserConnection: another UserConnection already has FromUserIdentifier, ToUserIdentifier %s, %s (5999)", bossID, otherID)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, b := range testenv.Backends(t) {
				t.Run(b.Name, func(t *testing.T) {
					p := testenv.Partition(t)
					db, err := engine.Open(ctx, b.URL, []string{p}, reg)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { db.Close() })
					st, _ := db.Store(p)
					create(t, st, "User", `{"UserIdentifier":"`+bossID+`","Email":"boss@example.com"}`)
					create(t, st, "User", `{"UserIdentifier":"`+otherID+`","Email":"other@example.com"}`)
					create(t, st, "User", `{"UserIdentifier":"`+spareID+`","Email":"spare@example.com"}`)
					create(t, st, "Person", `{"UserIdentifier":"`+bossID+`","OrganizationIdentifier":"`+orgA+`","PersonCode":"B"}`)
					create(t, st, "Person", `{"UserIdentifier":"`+otherID+`","OrganizationIdentifier":"`+orgB+`","PersonCode":"O"}`)
					im, err := m.plan(ctx, st, rows(), problems{}, orgA, true)
					if err != nil {
						t.Fatal(err)
					}
					c.meddle(t, st)
					persons := func() int64 {
						n, err := st.Count(ctx, m.person, engine.Query{}, engine.AllOrganizations())
						if err != nil {
							t.Fatal(err)
						}
						return n
					}
					before := persons()
					err = im.write(ctx, st, "")
					var verr *engine.ValidationError
					if !errors.As(err, &verr) || fmt.Sprint(verr.Fields) != fmt.Sprint(c.want) {
						t.Errorf("write: %v\n got %v\nwant %v", err, verr, c.want)
					}
					if got := persons(); got != before {
						t.Errorf("%d persons after a refused import, want %d", got, before)
					}
				})
			}
		})
	}
}
