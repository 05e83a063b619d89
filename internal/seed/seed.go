// Package seed fills a partition with believable demo data through the engine's validation.
package seed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"credo/engine"
)

// Options shape a seed run.
type Options struct {
	// People is how many people (and users) to create across the organizations; default 300.
	People int
	// Seed makes runs repeatable.
	Seed uint64
	// Progress receives one line per step (rewritten in place on a terminal).
	Progress io.Writer
	// Now anchors dates; default time.Now.
	Now time.Time
}

// Summary counts what a run created, per resource name.
type Summary map[string]int

// seeder carries one run's state.
type seeder struct {
	ctx   context.Context
	store *engine.Store
	rng   *rand.Rand
	opts  Options
	now   time.Time
	tty   bool
	sum   Summary
	step  int
}

// Steps is the number of progress steps a run reports.
const steps = 9

// MinPeople is the fewest people a run creates: one per demo organization, each of which needs
// a user to teach and enrol.
const MinPeople = 3

// Run seeds the store's partition. It refuses a partition that already holds people, so that a
// second run cannot collide with the first, and fewer than MinPeople people (zero means 300).
func Run(ctx context.Context, store *engine.Store, opts Options) (Summary, error) {
	if opts.People == 0 {
		opts.People = 300
	}
	if opts.People < MinPeople {
		return nil, fmt.Errorf("seed: %d people are too few: at least %d, one per demo organization", opts.People, MinPeople)
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	s := &seeder{ctx: ctx, store: store, rng: rand.New(rand.NewPCG(opts.Seed, 42)), opts: opts,
		now: opts.Now.UTC().Truncate(time.Second), sum: Summary{}}
	if f, ok := opts.Progress.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			s.tty = true
		}
	}
	people := store.Registry().MustByName("Person")
	n, err := store.Count(ctx, people, engine.Query{}, engine.AllOrganizations())
	if err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, fmt.Errorf("seed: partition %s already has %d people; seed an empty partition", store.Partition, n)
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	if s.tty {
		fmt.Fprintln(opts.Progress)
	}
	return s.sum, nil
}

// progress reports a finished step.
func (s *seeder) progress(what string, count int) {
	s.step++
	bar := strings.Repeat("#", s.step*20/steps) + strings.Repeat(".", 20-s.step*20/steps)
	line := fmt.Sprintf("seed %s [%s] %2d/%d %-28s %6d", s.store.Partition, bar, s.step, steps, what, count)
	if s.tty {
		fmt.Fprintf(s.opts.Progress, "\r%s", line)
	} else {
		fmt.Fprintln(s.opts.Progress, line)
	}
}

// insert validates and stores rows of a resource (member name → JSON value) in one transaction.
func (s *seeder) insert(name string, rows []map[string]any) error {
	r := s.store.Registry().MustByName(name)
	drafts := make([]engine.Draft, len(rows))
	for i, row := range rows {
		b, err := json.Marshal(row)
		if err != nil {
			return fmt.Errorf("seed %s: %w", name, err)
		}
		drafts[i], err = r.DecodeFileDraft(b)
		if err != nil {
			return fmt.Errorf("seed %s row %d: %w", name, i, err)
		}
	}
	if err := s.store.InsertAll(s.ctx, r, drafts, engine.AllOrganizations()); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	s.sum[name] += len(rows)
	return nil
}

func (s *seeder) pick(list []string) string { return list[s.rng.IntN(len(list))] }

// when renders an instant days from now (negative: past) in one of a few offsets.
func (s *seeder) when(days float64) string {
	offsets := []int{-6, -5, -4, 0, 1, 5}
	loc := time.FixedZone("", offsets[s.rng.IntN(len(offsets))]*3600)
	t := s.now.Add(time.Duration(days * 24 * float64(time.Hour))).In(loc)
	return engine.DateTime{Time: t}.String()
}

func id() string { return engine.NewID() }
