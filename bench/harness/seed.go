package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"credo/engine"
	_ "credo/handlers/people"   // the hooks the descriptors name (group-slug, membership-deletion)
	_ "credo/handlers/security" // permission-mask
	"credo/resources"
)

// dataset describes one seeded partition.
type dataset struct {
	Partition string
	// Comments are user comments spread over Users users in orgCount organizations.
	Comments, Users int
	// People and Gradebooks are seeded only in the main partition (W5 exports the gradebooks).
	People, Gradebooks int
}

// orgCount is the number of organizations comments and people are spread over.
const orgCount = 10

// seedChunk is how many records one InsertAll call (one transaction) takes, to bound memory.
const seedChunk = 50_000

// w4Author is the CommentCreatedBy of every comment that W4 creates, so that the harness can
// delete them afterwards and every run starts from the same rows.
const w4Author = "0b0b0b0b-0000-4000-8000-00000000b0b0"

// ids makes repeatable UUIDs (version 4 layout) from a seeded generator.
type ids struct{ rng *rand.Rand }

func (g ids) next() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], g.rng.Uint64())
	binary.BigEndian.PutUint64(b[8:], g.rng.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[x>>4], hex[x&0xf])
	}
	return string(out)
}

// registry loads the built-in descriptors, as credo serve does.
func registry() (*engine.Registry, error) { return engine.Load(resources.FS) }

// recordSetter fills a draft of one resource by member name.
type recordSetter struct{ d engine.Draft }

func newRecord(r *engine.Resource) *recordSetter { return &recordSetter{d: r.NewDraft()} }

func (s *recordSetter) set(name string, v any) *recordSetter {
	if err := s.d.Set(name, v); err != nil {
		panic(fmt.Sprintf("bench: %v", err))
	}
	return s
}

// inserter collects records and stores them in chunks through the engine's validation.
type inserter struct {
	ctx    context.Context
	store  *engine.Store
	r      *engine.Resource
	drafts []engine.Draft
	total  int
}

func (in *inserter) add(s *recordSetter) error {
	in.drafts = append(in.drafts, s.d)
	if len(in.drafts) >= in.chunk() {
		return in.flush()
	}
	return nil
}

// sqliteMaxVariables is SQLite's limit on bind values in one statement. engine.InsertAll
// batches its statements far below it itself (4,000 values); the harness still gives it at most
// this many values' rows per call on SQLite, so that each call's transaction stays short.
const sqliteMaxVariables = 32766

// chunk is how many records one InsertAll call takes.
func (in *inserter) chunk() int {
	if in.store.Dialect() == engine.SQLite {
		return max(1, sqliteMaxVariables/len(in.r.Fields))
	}
	return seedChunk
}

func (in *inserter) flush() error {
	if len(in.drafts) == 0 {
		return nil
	}
	if err := in.store.InsertAll(in.ctx, in.r, in.drafts, engine.AllOrganizations()); err != nil {
		return err
	}
	in.total += len(in.drafts)
	in.drafts = in.drafts[:0]
	return nil
}

var words = strings.Fields(`the learner completed module review safety orientation asked about
	schedule exam accommodation approved pending follow up manager noted training guide
	certificate renewal overdue excellent progress needs support site procedure quarterly`)

func sentence(rng *rand.Rand, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[rng.IntN(len(words))]
	}
	return strings.Join(parts, " ")
}

var offsets = []int{-7, -6, -5, -4, 0, 1, 2, 5}

// when returns an instant up to two years before anchor, in one of a few offsets.
func when(rng *rand.Rand, anchor time.Time) engine.DateTime {
	t := anchor.Add(-time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour)))).Truncate(time.Millisecond)
	return engine.DateTime{Time: t.In(time.FixedZone("", offsets[rng.IntN(len(offsets))]*3600))}
}

// anchor fixes the seeded instants so that every seed of a dataset is the same.
var anchor = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// seed fills d's partition unless it already holds d.Comments comments; a partition holding
// some other number of comments is an error (drop it with -reseed).
func seed(ctx context.Context, dbURL string, reg *engine.Registry, d dataset, logf func(string, ...any)) error {
	db, err := engine.Open(ctx, dbURL, []string{d.Partition}, reg)
	if err != nil {
		return err
	}
	defer db.Close()
	store, _ := db.Store(d.Partition)
	comments := reg.MustByName("UserComment")
	n, err := store.Count(ctx, comments, engine.Query{}, engine.AllOrganizations())
	if err != nil {
		return err
	}
	if n == int64(d.Comments) {
		logf("seed %s: already holds %d comments; kept", d.Partition, n)
		return nil
	}
	if n != 0 {
		return fmt.Errorf("seed %s: holds %d comments, want %d or none; rerun with -reseed", d.Partition, n, d.Comments)
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(uint64(len(d.Partition)), uint64(d.Comments)))
	gen := ids{rng}
	orgs := make([]string, orgCount)
	for i := range orgs {
		orgs[i] = gen.next()
	}
	users := make([]string, d.Users)
	for i := range users {
		users[i] = gen.next()
	}
	in := &inserter{ctx: ctx, store: store, r: comments}
	for i := 0; i < d.Comments; i++ {
		u := rng.IntN(len(users))
		s := newRecord(comments).
			set("CommentIdentifier", gen.next()).
			set("CommentCreatedBy", users[rng.IntN(len(users))]).
			set("OrganizationIdentifier", orgs[u%orgCount]).
			set("UserIdentifier", users[u]).
			set("CommentText", sentence(rng, 6+rng.IntN(12))).
			set("CommentCreated", when(rng, anchor))
		if err := in.add(s); err != nil {
			return fmt.Errorf("seed %s comments: %w", d.Partition, err)
		}
	}
	if err := in.flush(); err != nil {
		return fmt.Errorf("seed %s comments: %w", d.Partition, err)
	}
	if err := seedPeople(ctx, store, reg, d, rng, orgs); err != nil {
		return err
	}
	if err := seedGradebooks(ctx, store, reg, d, rng, orgs); err != nil {
		return err
	}
	logf("seed %s: %d comments, %d people, %d gradebooks in %v", d.Partition, d.Comments, d.People, d.Gradebooks, time.Since(start).Round(time.Millisecond))
	return nil
}

var (
	firstNames = strings.Fields("Ava Liam Noah Emma Olivia Mason Lucas Mia Amelia Ethan Aria Leo Zoe Omar Priya Chen")
	lastNames  = strings.Fields("Smith Tremblay Roy Gagnon Lee Wilson Brown Singh Martin Nguyen Patel Clark Lewis Walker")
	jobs       = strings.Fields("Electrician Welder Pipefitter Carpenter Millwright Operator Supervisor Inspector")
	regions    = strings.Fields("North South East West Central Coastal")
)

func seedPeople(ctx context.Context, store *engine.Store, reg *engine.Registry, d dataset, rng *rand.Rand, orgs []string) error {
	people := reg.MustByName("Person")
	gen := ids{rng}
	in := &inserter{ctx: ctx, store: store, r: people}
	for i := 0; i < d.People; i++ {
		name := firstNames[rng.IntN(len(firstNames))] + " " + lastNames[rng.IntN(len(lastNames))]
		s := newRecord(people).
			set("PersonIdentifier", gen.next()).
			set("UserIdentifier", gen.next()).
			set("OrganizationIdentifier", orgs[i%orgCount]).
			set("FullName", name).
			set("PersonCode", fmt.Sprintf("P%07d", i)).
			set("JobTitle", jobs[rng.IntN(len(jobs))]).
			set("Region", regions[rng.IntN(len(regions))]).
			set("Phone", fmt.Sprintf("+1 555 %03d %04d", rng.IntN(1000), rng.IntN(10000))).
			set("EmailEnabled", rng.IntN(10) > 0).
			set("IsLearner", true).
			set("CustomKey", int64(i)).
			set("Created", when(rng, anchor)).
			set("LastAuthenticated", when(rng, anchor))
		if err := in.add(s); err != nil {
			return fmt.Errorf("seed %s people: %w", d.Partition, err)
		}
	}
	if err := in.flush(); err != nil {
		return fmt.Errorf("seed %s people: %w", d.Partition, err)
	}
	return nil
}

var gradebookTypes = []string{"Scores", "Standards", "ScoresAndStandards"}

func seedGradebooks(ctx context.Context, store *engine.Store, reg *engine.Registry, d dataset, rng *rand.Rand, orgs []string) error {
	gradebooks := reg.MustByName("Gradebook")
	gen := ids{rng}
	in := &inserter{ctx: ctx, store: store, r: gradebooks}
	for i := 0; i < d.Gradebooks; i++ {
		s := newRecord(gradebooks).
			set("GradebookIdentifier", gen.next()).
			set("AchievementIdentifier", gen.next()).
			set("EventIdentifier", gen.next()).
			set("OrganizationIdentifier", orgs[i%orgCount]).
			set("IsLocked", rng.IntN(4) == 0).
			set("GradebookTitle", fmt.Sprintf("%s %s %d", jobs[rng.IntN(len(jobs))], "Level", 1+rng.IntN(4))).
			set("GradebookType", gradebookTypes[rng.IntN(len(gradebookTypes))]).
			set("LastChangeType", "Modified").
			set("LastChangeUser", "bench").
			set("Reference", fmt.Sprintf("GB-%07d", i)).
			set("GradebookCreated", when(rng, anchor)).
			set("LastChangeTime", when(rng, anchor))
		if err := in.add(s); err != nil {
			return fmt.Errorf("seed %s gradebooks: %w", d.Partition, err)
		}
	}
	if err := in.flush(); err != nil {
		return fmt.Errorf("seed %s gradebooks: %w", d.Partition, err)
	}
	return nil
}

// workload is what the cases pick from: every comment id and every (organization, user) pair.
type workload struct {
	IDs   []string
	Pairs [][2]string
	Orgs  []string
}

// readWorkload streams the seeded comments' keys and filter values through the engine.
func readWorkload(ctx context.Context, dbURL string, reg *engine.Registry, partition string) (*workload, error) {
	db, err := engine.Open(ctx, dbURL, []string{partition}, reg)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	store, _ := db.Store(partition)
	r := reg.MustByName("UserComment")
	member := func(name string) *engine.Field { f, _ := r.Member(name); return f }
	key, org, user := member("CommentIdentifier"), member("OrganizationIdentifier"), member("UserIdentifier")
	w := &workload{}
	pairs := map[[2]string]bool{}
	orgs := map[string]bool{}
	q := engine.Query{Page: 1, Take: 0, Sort: r.DefaultSort, Fields: []*engine.Field{key, org, user}}
	err = store.Stream(ctx, r, q, engine.AllOrganizations(), func(rec engine.Record) error {
		w.IDs = append(w.IDs, rec[key.Index].(string))
		p := [2]string{rec[org.Index].(string), rec[user.Index].(string)}
		if !pairs[p] {
			pairs[p] = true
			w.Pairs = append(w.Pairs, p)
		}
		if !orgs[p[0]] {
			orgs[p[0]] = true
			w.Orgs = append(w.Orgs, p[0])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(w.IDs) == 0 {
		return nil, fmt.Errorf("partition %s holds no comments", partition)
	}
	return w, nil
}

// deleteW4 removes the comments W4 created, so that the next case and run see the seeded rows.
func deleteW4(ctx context.Context, dbURL string, reg *engine.Registry, partition string) (int64, error) {
	db, err := engine.Open(ctx, dbURL, []string{partition}, reg)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	store, _ := db.Store(partition)
	return store.DeleteWhere(ctx, reg.MustByName("UserComment"), "CommentCreatedBy", w4Author)
}
