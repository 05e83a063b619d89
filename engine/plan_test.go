package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/request"
	"credo/internal/testenv"
)

// TestPostgresPlansUseIndexes loads 100,000 user comments and asks PostgreSQL for the plans of
// the key lookup, every equality filter, the default sort and a filtered, sorted page, each
// of the last two also continued after a position (keyset): none may scan the table
// sequentially, and a continued page seeks its index.
func TestPostgresPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	s, reg := loadedPostgres(t, "loads 100,000 rows")
	r := reg.MustByName("UserComment")
	const n = 100_000
	drafts := make([]engine.Draft, n)
	orgs := make([]string, 10)
	for i := range orgs {
		orgs[i] = fmt.Sprintf("0190a6f0-0000-7000-8000-%012d", i+1)
	}
	var someID string
	for i := range drafts {
		body := fmt.Sprintf(`{"CommentCreatedBy":"0190a6f0-0000-7000-9000-%012d","OrganizationIdentifier":%q,"UserIdentifier":"0190a6f0-0000-7000-a000-%012d","CommentText":"comment %d","CommentCreated":"2024-%02d-%02dT%02d:%02d:00Z"}`,
			i%500, orgs[i%10], i%1000, i, 1+i%12, 1+i%28, i%24, i%60)
		d, err := r.DecodeDraft([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		drafts[i] = d
	}
	if err := s.InsertAll(ctx, r, drafts, engine.AllOrganizations()); err != nil {
		t.Fatal(err)
	}
	someID = drafts[4242].Get("CommentIdentifier").(string)
	if err := s.DB(ctx).Exec("ANALYZE " + s.Table(r)).Error; err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"key":                 "Identifier=" + someID,
		"CommentCreatedBy":    "CommentCreatedBy=0190a6f0-0000-7000-9000-000000000007",
		"OrganizationIdent.":  "OrganizationIdentifier=" + orgs[3],
		"UserIdentifier":      "UserIdentifier=0190a6f0-0000-7000-a000-000000000042",
		"CommentCreated":      "CommentCreated=2024-03-04T05:06:00Z",
		"default sort":        "",
		"org, sorted by date": "OrganizationIdentifier=" + orgs[3] + "&Sort=CommentCreated desc",
	}
	created := drafts[4242].Get("CommentCreated").(engine.DateTime).Storage()
	// Continued pages (Continue) must seek the index to their position: an Index Cond on the
	// first order column, not an index read from its start with a filter.
	continued := map[string]engine.Cursor{
		"default sort, continued":        {someID},
		"org, sorted by date, continued": {created, someID},
	}
	cases["default sort, continued"] = ""
	cases["org, sorted by date, continued"] = cases["org, sorted by date"]
	for name, params := range cases {
		q := query(t, r, request.KindList, params)
		q.After = continued[name]
		sql, vars := s.ListSQL(r, q, engine.AllOrganizations())
		var plan []string
		if err := s.DB(ctx).Raw("EXPLAIN "+sql, vars...).Scan(&plan).Error; err != nil {
			t.Fatalf("%s: explain: %v", name, err)
		}
		text := strings.Join(plan, "\n")
		t.Logf("%s: %s\n%s", name, params, text)
		if strings.Contains(text, "Seq Scan") {
			t.Errorf("%s: the plan scans the table:\n%s", name, text)
		}
		if q.After != nil && !strings.Contains(text, "Index Cond") {
			t.Errorf("%s: the plan does not seek an index to the position:\n%s", name, text)
		}
	}
}

// TestPostgresAddressScopePlans loads 20,000 people of 100 organizations, each referring to
// an address, and asks PostgreSQL for the plans of an organization's list, count and key
// lookup of people-addresses: the organization's people are read through an index (never the
// whole table), and the scope is one semi-join of their addresses, not a subquery tested
// against every address (a SubPlan), so that the work follows the organization's people, not
// the partition's addresses, as both grow.
func TestPostgresAddressScopePlans(t *testing.T) {
	ctx := context.Background()
	s, reg := loadedPostgres(t, "loads 20,000 people")
	addresses, people := reg.MustByName("PersonAddress"), reg.MustByName("Person")
	const n = 20_000
	members := []string{"BillingAddressIdentifier", "HomeAddressIdentifier", "ShippingAddressIdentifier", "WorkAddressIdentifier"}
	ad, pd := make([]engine.Draft, n), make([]engine.Draft, n)
	for i := range n {
		a := fmt.Sprintf("0190a6f0-0000-7000-8000-%012d", i)
		var err error
		if ad[i], err = addresses.DecodeDraft(fmt.Appendf(nil, `{"AddressIdentifier":%q,"City":"City %d"}`, a, i%300)); err != nil {
			t.Fatal(err)
		}
		if pd[i], err = people.DecodeDraft(fmt.Appendf(nil, `{"UserIdentifier":"0190a6f0-0000-7000-9000-%012d","OrganizationIdentifier":"0190a6f0-0000-7000-a000-%012d",%q:%q}`,
			i, i%100, members[i%4], a)); err != nil {
			t.Fatal(err)
		}
	}
	for r, drafts := range map[*engine.Resource][]engine.Draft{addresses: ad, people: pd} {
		if err := s.InsertAll(ctx, r, drafts, engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if err := s.DB(ctx).Exec("ANALYZE " + s.Table(r)).Error; err != nil {
			t.Fatal(err)
		}
	}
	org := engine.Organization("0190a6f0-0000-7000-a000-000000000007")
	for name, params := range map[string]string{"list": "", "key": "Identifier=0190a6f0-0000-7000-8000-000000000007", "by city": "City=City 7&Sort=City"} {
		q := query(t, addresses, request.KindList, params)
		list, lvars := s.ListSQL(addresses, q, org)
		count, cvars := s.CountSQL(addresses, q, org)
		for stmt, sql := range map[string]string{"list": list, "count": count} {
			vars := lvars
			if stmt == "count" {
				vars = cvars
			}
			var plan []string
			if err := s.DB(ctx).Raw("EXPLAIN "+sql, vars...).Scan(&plan).Error; err != nil {
				t.Fatalf("%s %s: explain: %v", stmt, name, err)
			}
			text := strings.Join(plan, "\n")
			t.Logf("%s %s: %s\n%s", stmt, name, params, text)
			if strings.Contains(text, "Seq Scan on people") || strings.Contains(text, "SubPlan") {
				t.Errorf("%s %s: the plan scans every person or tests every address:\n%s", stmt, name, text)
			}
		}
	}
}

// loadedPostgres is a fresh partition of the fixture registry on the test PostgreSQL, for a
// test that loads many rows (what, the reason it is skipped under -short).
func loadedPostgres(t *testing.T, what string) (*engine.Store, *engine.Registry) {
	t.Helper()
	pg := testenv.Postgres(t)
	if testing.Short() {
		t.Skip(what)
	}
	reg := fixtureRegistry(t)
	p := testenv.Partition(t)
	db, err := engine.Open(context.Background(), pg, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, _ := db.Store(p)
	return s, reg
}
