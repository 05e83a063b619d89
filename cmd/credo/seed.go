package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"

	"credo/handlers/compliance"
	"credo/internal/seed"
)

// seed fills an empty partition with demo data and shows progress on the terminal.
func seedCmd(ctx context.Context, args []string, stdout io.Writer) error {
	var partition string
	var rows int
	var rngSeed uint64
	cfg, _, err := parseConfig("seed", args, stdout, func(fs *flag.FlagSet) {
		fs.StringVar(&partition, "partition", "", "partition to fill (required)")
		fs.IntVar(&rows, "rows", 300, "how many people (and users) to create")
		fs.Uint64Var(&rngSeed, "seed", 1, "random seed, for repeatable data")
	})
	if err != nil {
		return err
	}
	if partition == "" {
		return errors.New("usage: credo seed --partition P [--rows N]")
	}
	if !contains(cfg.Partitions, partition) {
		cfg.Partitions = append(cfg.Partitions, partition)
	}
	_, db, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	store, _ := db.Store(partition)
	sum, err := seed.Run(ctx, store, seed.Options{People: rows, Seed: rngSeed, Progress: os.Stderr})
	if err != nil {
		return err
	}
	if err := compliance.Seed(ctx, store, rand.New(rand.NewPCG(rngSeed, 9))); err != nil {
		return fmt.Errorf("seed compliance: %w", err)
	}
	names := make([]string, 0, len(sum))
	for n := range sum {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(stdout, "%-20s %6d\n", n, sum[n])
	}
	fmt.Fprintf(stdout, "partition %s seeded; compliance statuses filled\n", partition)
	return nil
}
