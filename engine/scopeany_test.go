package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"credo/engine"
	"credo/handlers/request"
	"credo/internal/testenv"
)

// Addresses seeded by seedAddresses: one per member of a person of organization A that refers
// to it, one of organization B's person, one that people of both refer to, one nobody does.
const (
	addrBilling  = "0190a6f0-0000-7000-8000-000000000a01"
	addrHome     = "0190a6f0-0000-7000-8000-000000000a02"
	addrShipping = "0190a6f0-0000-7000-8000-000000000a03"
	addrWork     = "0190a6f0-0000-7000-8000-000000000a04"
	addrOfB      = "0190a6f0-0000-7000-8000-000000000a05"
	addrShared   = "0190a6f0-0000-7000-8000-000000000a06"
	addrOrphan   = "0190a6f0-0000-7000-8000-000000000a07"
)

func seedAddresses(t *testing.T, s *engine.Store) {
	t.Helper()
	for i, a := range []string{addrBilling, addrHome, addrShipping, addrWork, addrOfB, addrShared, addrOrphan} {
		seedCreate(t, s, "PersonAddress", fmt.Sprintf(`{"AddressIdentifier":%q,"City":"City %d","Street1":"%d Main Street","Country":"CA"}`, a, 7-i, i+1))
	}
	// A's people refer to an address by each of the four members, two of them on one person;
	// B's person refers to its own address and to the shared one.
	seedCreate(t, s, "Person", `{"UserIdentifier":"`+userU1+`","OrganizationIdentifier":"`+orgA+`","BillingAddressIdentifier":"`+addrBilling+`","HomeAddressIdentifier":"`+addrHome+`"}`)
	seedCreate(t, s, "Person", `{"UserIdentifier":"`+userU2+`","OrganizationIdentifier":"`+orgA+`","ShippingAddressIdentifier":"`+addrShipping+`"}`)
	seedCreate(t, s, "Person", `{"UserIdentifier":"0190a6f0-0000-7000-8000-000000000103","OrganizationIdentifier":"`+orgA+`","WorkAddressIdentifier":"`+addrWork+`","HomeAddressIdentifier":"`+addrShared+`"}`)
	seedCreate(t, s, "Person", `{"UserIdentifier":"`+userU2+`","OrganizationIdentifier":"`+orgB+`","HomeAddressIdentifier":"`+addrOfB+`","WorkAddressIdentifier":"`+addrShared+`"}`)
}

// TestAddressesScopedByPeople: an address is visible to a caller of an organization when one
// of its people refers to it by any of the four address members; another organization's
// address, and one nobody refers to, are missing from get, exists, count, list and search,
// with filters, sorts and pages; every organization sees them all.
func TestAddressesScopedByPeople(t *testing.T) {
	reg := loadGroups(t)
	r := reg.MustByName("PersonAddress")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		seedAddresses(t, s)
		a, b, all := engine.Organization(orgA), engine.Organization(orgB), engine.AllOrganizations()
		ofA := []string{addrBilling, addrHome, addrShipping, addrWork, addrShared}
		every := append(slices.Clone(ofA), addrOfB, addrOrphan)
		for _, tc := range []struct {
			scope engine.Scope
			sees  []string
		}{
			{a, ofA},
			{b, []string{addrOfB, addrShared}},
			{engine.Organization("0190a6f0-0000-7000-8000-00000000000c"), nil},
			{all, every},
		} {
			// Twice: the second run takes the cached plans.
			for range 2 {
				for _, id := range every {
					want := slices.Contains(tc.sees, id)
					_, err := s.Get(ctx, r, []any{id}, nil, tc.scope)
					if want && err != nil || !want && !engine.IsNotFound(err) {
						t.Errorf("%s: get %s: %v, want found %v", tc.scope, id, err, want)
					}
					if ok, err := s.Exists(ctx, r, []any{id}, tc.scope); err != nil || ok != want {
						t.Errorf("%s: exists %s: %v %v, want %v", tc.scope, id, ok, err, want)
					}
				}
				if n := groupCount(t, s, r, tc.scope); n != int64(len(tc.sees)) {
					t.Errorf("%s: count %d, want %d", tc.scope, n, len(tc.sees))
				}
				for name, kind := range map[string]request.Kind{"list": request.KindList, "search": request.KindSearch} {
					if got := addressIDs(t, s, r, kind, tc.scope, "Take", "1000"); !slices.Equal(got, sorted(tc.sees)) {
						t.Errorf("%s: %s %v, want %v", tc.scope, name, got, sorted(tc.sees))
					}
				}
			}
		}
		// Filters and sorts work within the scope: the cities count down from City 7 (billing).
		for _, tc := range []struct {
			params []string
			want   []string
		}{
			{[]string{"City", "City 4"}, []string{addrWork}},  // A's by WorkAddressIdentifier
			{[]string{"City", "City 3"}, nil},                 // B's
			{[]string{"City", "City 1"}, nil},                 // nobody's
			{[]string{"Street1", "main street"}, sorted(ofA)}, // contains, folded
			{[]string{"Country", "CA", "Sort", "City"}, []string{addrShared, addrWork, addrShipping, addrHome, addrBilling}},
			{[]string{"Sort", "City desc", "Take", "2"}, []string{addrBilling, addrHome}},
			{[]string{"Sort", "City desc", "Take", "2", "Page", "3"}, []string{addrShared}},
			{[]string{"Identifier", addrOfB}, nil},
		} {
			if got := addressIDs(t, s, r, request.KindList, a, tc.params...); !slices.Equal(got, tc.want) {
				t.Errorf("organization A, %v: %v, want %v", tc.params, got, tc.want)
			}
		}
		q := groupQuery(t, r, request.KindCount, []string{"Country", "CA"})
		if n, err := s.Count(ctx, r, q, a); err != nil || n != int64(len(ofA)) {
			t.Errorf("organization A, count of Country=CA: %d %v, want %d", n, err, len(ofA))
		}
		// Pages continued after a position (keyset) stay in the scope.
		q = groupQuery(t, r, request.KindList, []string{"Take", "2"})
		var got []string
		for {
			page, err := s.ListPage(ctx, r, q, a)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range page.Records {
				got = append(got, rec.Get(r, "AddressIdentifier").(string))
			}
			if page.Next == nil {
				break
			}
			q.After = page.Next
		}
		if !slices.Equal(got, sorted(ofA)) {
			t.Errorf("organization A, pages of 2 by position: %v, want %v", got, sorted(ofA))
		}
	})
}

// addressIDs runs a list or search of r and returns the AddressIdentifier of each record.
func addressIDs(t *testing.T, s *engine.Store, r *engine.Resource, kind request.Kind, scope engine.Scope, params ...string) []string {
	t.Helper()
	var out []string
	for _, rec := range groupList(t, s, r, kind, scope, params...) {
		i := strings.Index(rec, `"AddressIdentifier":"`)
		if i < 0 {
			t.Fatalf("a record without AddressIdentifier: %s", rec)
		}
		out = append(out, rec[i+len(`"AddressIdentifier":"`):][:36])
	}
	return out
}

func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// TestScopeAnyAcrossLocals: the links of `any` may start from different fields of the record
// (ORed), and an `any` entry holds together with the other scope entries (all must hold).
func TestScopeAnyAcrossLocals(t *testing.T) {
	reg, err := engine.Load(fstest.MapFS{
		"notes.yaml": {Data: []byte(`name: Note
path: catalog/notes
table: notes
summary: A note its author, its reviewer or its editor's organization sees.
operations: [get, count, list]
key: [NoteIdentifier]
fields:
  - {name: NoteIdentifier, type: uuid}
  - {name: AuthorIdentifier, type: uuid}
  - {name: ReviewerIdentifier, type: uuid}
scope:
  - any:
      - field: AuthorIdentifier
        via: {from: Member, remote: UserIdentifier, field: OrganizationIdentifier}
      - field: ReviewerIdentifier
        via: {from: Member, remote: UserIdentifier, field: OrganizationIdentifier}
      - field: AuthorIdentifier
        via: {from: Member, remote: DeputyIdentifier, field: OrganizationIdentifier}
  - field: NoteIdentifier
    via: {from: Shown, remote: NoteIdentifier, field: OrganizationIdentifier}
`)},
		"members.yaml": {Data: []byte(`name: Member
table: members
key: [MemberIdentifier]
fields:
  - {name: MemberIdentifier, type: uuid}
  - {name: UserIdentifier, type: uuid}
  - {name: DeputyIdentifier, type: uuid}
  - {name: OrganizationIdentifier, type: uuid}
`)},
		"shown.yaml": {Data: []byte(`name: Shown
table: shown
key: [NoteIdentifier, OrganizationIdentifier]
fields:
  - {name: NoteIdentifier, type: uuid}
  - {name: OrganizationIdentifier, type: uuid}
`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	notes := reg.MustByName("Note")
	const (
		author, reviewer, deputy = "0190a6f0-0000-7000-8000-000000000b01", "0190a6f0-0000-7000-8000-000000000b02", "0190a6f0-0000-7000-8000-000000000b03"
		principal, stranger      = "0190a6f0-0000-7000-8000-000000000b04", "0190a6f0-0000-7000-8000-000000000b05"
	)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		seedCreate(t, s, "Member", `{"UserIdentifier":"`+author+`","OrganizationIdentifier":"`+orgA+`"}`)
		seedCreate(t, s, "Member", `{"UserIdentifier":"`+reviewer+`","OrganizationIdentifier":"`+orgB+`"}`)
		seedCreate(t, s, "Member", `{"UserIdentifier":"`+principal+`","DeputyIdentifier":"`+deputy+`","OrganizationIdentifier":"`+orgB+`"}`)
		ids := map[string]string{}
		for name, body := range map[string]string{
			"by A's author":         `"AuthorIdentifier":"` + author + `","ReviewerIdentifier":"` + stranger + `"`,
			"reviewed by B":         `"AuthorIdentifier":"` + stranger + `","ReviewerIdentifier":"` + reviewer + `"`,
			"by B's deputy":         `"AuthorIdentifier":"` + deputy + `"`,
			"by A, reviewed by B":   `"AuthorIdentifier":"` + author + `","ReviewerIdentifier":"` + reviewer + `"`,
			"by A, shown to B only": `"AuthorIdentifier":"` + author + `"`,
		} {
			rec := seedCreate(t, s, "Note", `{`+body+`}`)
			ids[name] = rec.Get(notes, "NoteIdentifier").(string)
			for _, org := range []string{orgA, orgB} {
				if name != "by A, shown to B only" || org == orgB {
					seedCreate(t, s, "Shown", `{"NoteIdentifier":"`+ids[name]+`","OrganizationIdentifier":"`+org+`"}`)
				}
			}
		}
		for _, tc := range []struct {
			org  string
			sees []string
		}{
			{orgA, []string{"by A's author", "by A, reviewed by B"}},
			{orgB, []string{"reviewed by B", "by B's deputy", "by A, reviewed by B"}},
		} {
			scope := engine.Organization(tc.org)
			for name, id := range ids {
				want := slices.Contains(tc.sees, name)
				if _, err := s.Get(ctx, notes, []any{id}, nil, scope); want && err != nil || !want && !engine.IsNotFound(err) {
					t.Errorf("%s: get the note %s: %v, want found %v", scope, name, err, want)
				}
			}
			if n := groupCount(t, s, notes, scope); n != int64(len(tc.sees)) {
				t.Errorf("%s: count %d, want %d", scope, n, len(tc.sees))
			}
			if got := groupList(t, s, notes, request.KindList, scope); len(got) != len(tc.sees) {
				t.Errorf("%s: list %v, want %d notes", scope, got, len(tc.sees))
			}
		}
	})
}

// addressScopeIndexes are the indexes of people that the scope of people-addresses reads: the
// organization's people, then the address each refers to by one member.
var addressScopeIndexes = []string{
	"ix_people_organization_identifier_billing_address_identifier",
	"ix_people_organization_identifier_home_address_identifier",
	"ix_people_organization_identifier_shipping_address_identifier",
	"ix_people_organization_identifier_work_address_identifier",
}

// TestMigrateAddsTheAddressScopeIndexes: a partition migrated before people-addresses were
// scoped lacks the indexes of its links; the next start-up adds them.
func TestMigrateAddsTheAddressScopeIndexes(t *testing.T) {
	reg := loadGroups(t)
	ctx := context.Background()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			open := func() (*engine.Database, *engine.Store) {
				db, err := engine.Open(ctx, b.URL, []string{p}, reg)
				if err != nil {
					t.Fatal(err)
				}
				s, _ := db.Store(p)
				return db, s
			}
			have := func(s *engine.Store) []string {
				q, args := "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'people'", []any(nil)
				if s.Dialect() == engine.Postgres {
					q, args = "SELECT indexname FROM pg_indexes WHERE schemaname = ? AND tablename = 'people'", []any{p}
				}
				var names []string
				if err := s.DB(ctx).Raw(q, args...).Scan(&names).Error; err != nil {
					t.Fatal(err)
				}
				return names
			}
			db, s := open()
			for _, ix := range addressScopeIndexes {
				if !slices.Contains(have(s), ix) {
					t.Errorf("a new partition lacks %s", ix)
				}
				name := ix
				if s.Dialect() == engine.Postgres {
					name = `"` + p + `"."` + ix + `"`
				}
				if err := s.DB(ctx).Exec("DROP INDEX " + name).Error; err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			db, s = open()
			defer db.Close()
			for _, ix := range addressScopeIndexes {
				if !slices.Contains(have(s), ix) {
					t.Errorf("the migration of a partition without %s did not add it", ix)
				}
			}
		})
	}
}

// TestAddressOfNilUUIDIsNobodys: a person's omitted address member is stored as the nil UUID,
// which refers to no address; an address whose key is the nil UUID (a load may write one) is
// therefore no organization's, though every organization has people that omit an address.
// Only the unscoped caller (an operator) sees it.
func TestAddressOfNilUUIDIsNobodys(t *testing.T) {
	const nilAddr = "00000000-0000-0000-0000-000000000000"
	reg := loadGroups(t)
	r := reg.MustByName("PersonAddress")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		seedAddresses(t, s)
		// A load keeps the key it is given; a create refuses the nil UUID in a key.
		d, err := r.DecodeFileDraft([]byte(`{"AddressIdentifier":"` + nilAddr + `","City":"Nowhere","Street1":"0 Main Street","Country":"CA"}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InsertAll(ctx, r, []engine.Draft{d}, engine.AllOrganizations()); err != nil {
			t.Fatalf("load the nil UUID address: %v", err)
		}
		if _, err := s.Get(ctx, r, []any{nilAddr}, nil, engine.AllOrganizations()); err != nil {
			t.Fatalf("the nil UUID address was not stored under its key: %v", err)
		}
		for _, tc := range []struct {
			org  string
			sees []string
		}{
			{orgA, []string{addrBilling, addrHome, addrShipping, addrWork, addrShared}},
			{orgB, []string{addrOfB, addrShared}},
		} {
			scope := engine.Organization(tc.org)
			if _, err := s.Get(ctx, r, []any{nilAddr}, nil, scope); !engine.IsNotFound(err) {
				t.Errorf("%s: get of the nil UUID address: %v, want not found", tc.org, err)
			}
			if ok, err := s.Exists(ctx, r, []any{nilAddr}, scope); err != nil || ok {
				t.Errorf("%s: exists of the nil UUID address: %v %v, want false", tc.org, ok, err)
			}
			if n := groupCount(t, s, r, scope); n != int64(len(tc.sees)) {
				t.Errorf("%s: count %d, want %d", tc.org, n, len(tc.sees))
			}
			if got := addressIDs(t, s, r, request.KindList, scope, "Take", "1000"); !slices.Equal(got, sorted(tc.sees)) {
				t.Errorf("%s: list %v, want %v", tc.org, got, sorted(tc.sees))
			}
		}
	})
}
