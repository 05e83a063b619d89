package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"gorm.io/gorm"

	"credo/resources"
)

// TestLookupByEmailUsesTheIndex: among 5,000 analyzed users, a lookup by identity
// (MatchSame, any case) reads the folded unique index, and an exact Email filter its own plain
// index (the folded one serves no exact comparison), on both stores with their planners' own
// choice (sequential scans allowed).
func TestLookupByEmailUsesTheIndex(t *testing.T) {
	reg, err := Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	u := reg.MustByName("User")
	email, _ := u.Member("Email")
	ctx := context.Background()
	eachInternalStore(t, reg, "emails", func(t *testing.T, s *Store) {
		drafts := make([]Draft, 5000)
		for i := range drafts {
			drafts[i] = u.NewDraft()
			drafts[i].Set("Email", fmt.Sprintf("User%04d@Example.com", i))
		}
		if err := s.InsertAll(ctx, u, drafts, AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if err := s.db.Exec("ANALYZE " + s.Table(u)).Error; err != nil {
			t.Fatal(err)
		}
		for index, q := range map[string]*gorm.DB{
			"uxf_users_email": s.from(ctx, u).Where(s.cond(alias, email, MatchSame, []string{"user0042@example.com", "USER0043@EXAMPLE.COM"})),
			"ix_users_email":  s.from(ctx, u).Where(s.cond(alias, email, MatchEq, "User0042@Example.com")),
		} {
			plan := explain(t, s, q, func(*Store) error { return nil })
			if !strings.Contains(plan, index) || strings.Contains(plan, "Seq Scan") {
				t.Errorf("the lookup does not read %s:\n%s", index, plan)
			}
		}
	})
}
