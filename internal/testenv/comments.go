package testenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"credo/engine"
)

// Comments are the user comments SeedComments wrote: their identifiers and the distinct
// (organization, user) pairs, for benchmarks that read them back.
type Comments struct {
	IDs   []string
	Pairs [][2]string
}

// SeedComments writes n UserComment records by users users spread over 10 organizations into
// s, the same records on every run (seeded random numbers).
func SeedComments(tb testing.TB, s *engine.Store, n, users int) Comments {
	tb.Helper()
	r := s.Registry().MustByName("UserComment")
	rng := rand.New(rand.NewPCG(1, 2))
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff)
	}
	orgs := make([]string, 10)
	for i := range orgs {
		orgs[i] = uuid()
	}
	people := make([]string, users)
	for i := range people {
		people[i] = uuid()
	}
	var out Comments
	seen := map[[2]string]bool{}
	drafts := make([]engine.Draft, n)
	for i := range drafts {
		u := rng.IntN(users)
		id := uuid()
		dt, err := engine.ParseDateTime(fmt.Sprintf("2025-%02d-%02dT%02d:%02d:00.123-05:00", 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60)))
		if err != nil {
			tb.Fatal(err)
		}
		drafts[i], err = r.DraftOf(map[string]any{
			"CommentIdentifier": id, "CommentCreatedBy": people[rng.IntN(users)],
			"OrganizationIdentifier": orgs[u%len(orgs)], "UserIdentifier": people[u],
			"CommentText":    "the learner completed the safety orientation module and asked about the exam",
			"CommentCreated": dt,
		})
		if err != nil {
			tb.Fatal(err)
		}
		out.IDs = append(out.IDs, id)
		if pair := [2]string{orgs[u%len(orgs)], people[u]}; !seen[pair] {
			seen[pair] = true
			out.Pairs = append(out.Pairs, pair)
		}
	}
	// InsertAll batches within its one transaction as the database needs.
	if err := s.InsertAll(context.Background(), r, drafts, engine.AllOrganizations()); err != nil {
		tb.Fatal(err)
	}
	return out
}
