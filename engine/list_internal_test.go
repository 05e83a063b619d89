package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"credo/resources"
)

// TestPageAndCountAreOneBatch (PostgreSQL): a full page and its count take a connection from
// the pool once, sent in one batch, whether the shape has a plan or is built with its values
// (a contains filter); the totals are right.
func TestPageAndCountAreOneBatch(t *testing.T) {
	// testenv imports the engine: its Backends and Partition cannot serve an internal test.
	url := os.Getenv("CREDO_TEST_POSTGRES")
	if url == "" {
		if os.Getenv("CREDO_REQUIRE_POSTGRES") == "1" {
			t.Fatal("CREDO_REQUIRE_POSTGRES=1 but CREDO_TEST_POSTGRES is not set")
		}
		t.Skip("PostgreSQL only: CREDO_TEST_POSTGRES is not set")
	}
	reg, err := Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := "batch" + strings.ReplaceAll(NewID()[24:], "-", "")
	db, err := Open(ctx, url, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := db.Store(p)
	defer s.db.Exec("DROP SCHEMA " + quote(p) + " CASCADE")
	w := reg.MustByName("Widget")
	for i := range 5 {
		d, err := w.DecodeDraft(fmt.Appendf(nil, `{"OrganizationIdentifier":"0190a6f0-0000-7000-8000-00000000000a","WidgetCode":"B%d","WidgetTitle":"blue %d"}`, i, i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, w, d, AllOrganizations()); err != nil {
			t.Fatal(err)
		}
	}
	title, _ := w.Member("WidgetTitle")
	for name, conds := range map[string][]Cond{
		"planned":   nil,
		"per query": {{Field: title, Op: MatchContains, Value: "blue"}},
	} {
		q := Query{Conds: conds, Page: 1, Take: 2, Sort: w.DefaultSort, Fields: w.Output}
		before := s.pool.Stats().Acquires
		page, err := s.ListPage(ctx, w, q, AllOrganizations())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := s.pool.Stats().Acquires - before; n != 1 {
			t.Errorf("%s: the page and its count took %d connections, want 1 (one batch)", name, n)
		}
		if len(page.Records) != 2 || page.Total != 5 {
			t.Errorf("%s: %d records of %d, want 2 of 5", name, len(page.Records), page.Total)
		}
	}
}
