package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"

	"credo/engine"
	"credo/handlers/compliance"
	"credo/internal/seed"
)

const seedDoc = `Fill an empty partition with realistic demo data: organizations, people and users,
groups and memberships, events, gradebooks, achievements and compliance statuses. Progress is
shown on a terminal; the counts of what was created are printed at the end. The run is one
transaction: when it fails, nothing is written and it can be run again.`

// seedCmd fills an empty partition with demo data.
func seedCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	cfg := newConfig()
	fs := newFlags("seed", "credo seed [flags]", seedDoc)
	partition := cfg.partitionFlag(fs.FlagSet, "partition to fill")
	rows := fs.Int("rows", 300, "how many people (and users) to create")
	rngSeed := fs.Uint64("seed", 1, "random seed, for repeatable data")
	cfg.databaseFlags(fs.FlagSet)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.args(0, 0); err != nil {
		return err
	}
	if *rows < seed.MinPeople {
		return usageErrorf("--rows must be at least %d (one person per demo organization)", seed.MinPeople)
	}
	if err := cfg.finish(); err != nil {
		return err
	}
	p, err := partition()
	if err != nil {
		return err
	}
	_, db, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	store, _ := db.Store(p)
	var progress io.Writer = io.Discard
	if f, ok := stderr.(*os.File); ok {
		progress = f // seed.Run rewrites its line on a terminal, and writes lines elsewhere
	}
	// One transaction: a run that fails part way leaves the partition as empty as it found it,
	// so that it can simply be run again (seed.Run refuses a partition that holds people).
	var sum seed.Summary
	err = store.Transaction(ctx, func(tx *engine.Store) error {
		var err error
		if sum, err = seed.Run(ctx, tx, seed.Options{People: *rows, Seed: *rngSeed, Progress: progress}); err != nil {
			return err
		}
		if err := compliance.Seed(ctx, tx, rand.New(rand.NewPCG(*rngSeed, 9))); err != nil {
			return fmt.Errorf("seed compliance: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w; nothing was written", err)
	}
	names := make([]string, 0, len(sum))
	for n := range sum {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(stdout, "%-20s %6d\n", n, sum[n])
	}
	fmt.Fprintf(stdout, "partition %s seeded; compliance statuses filled\n", p)
	return nil
}
