package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"credo/bench/load"
	"credo/engine"
)

// L1: `credo load` of bulkRows comments from a CSV file into an empty partition, against
// `credo-ref load`, the raw bulk insert (COPY on PostgreSQL, one transaction of prepared
// multi-row INSERTs on SQLite) of the same file into another. Both partitions' tables are
// made beforehand, so both times are the process's whole run on existing empty tables:
// credo's includes its start-up, its checks of every row and its unique and key checks
// against the partition, the reference's only the conversion its inserts need.
const (
	bulkRows         = 100_000
	bulkPartition    = "benchload"
	bulkRefPartition = "benchloadref"
)

// bulkRun is one process's load of the file.
type bulkRun struct {
	Wall    time.Duration
	CPU     time.Duration // user + system time of the process (getrusage)
	PeakRSS int64         // the process's largest VmHWM, sampled while it runs
}

// bulkResult is L1's runs: the median of each server's.
type bulkResult struct {
	Runs       int
	Credo, Ref bulkRun
}

// runBulk writes the file, then loads it runs times with each program, emptying the
// partitions before every run; they are dropped at the end.
func runBulk(ctx context.Context, cfg *config, reg *engine.Registry, dbURL string, logf func(string, ...any)) (bulkResult, error) {
	file := filepath.Join(cfg.work, "bulk-comments.csv")
	if err := writeBulkFile(file, bulkRows); err != nil {
		return bulkResult{}, err
	}
	if os.Getenv("CREDO_BENCH_KEEP_BULK") == "" {
		defer os.Remove(file)
	}
	defer dropPartitions(context.WithoutCancel(ctx), dbURL, []string{bulkPartition, bulkRefPartition}) //nolint:errcheck // best effort
	var credo, ref []bulkRun
	for i := 0; i < cfg.exports; i++ {
		if err := freshPartitions(ctx, dbURL, reg, bulkPartition, bulkRefPartition); err != nil {
			return bulkResult{}, err
		}
		c, err := timeProcess(cfg.credo, "load", "--database", dbURL, "--partition", bulkPartition, "--resource", "security/users-comments", file)
		if err != nil {
			return bulkResult{}, fmt.Errorf("L1 credo load: %w", err)
		}
		r, err := timeProcess(cfg.ref, "load", "--database", dbURL, "--partition", bulkRefPartition, file)
		if err != nil {
			return bulkResult{}, fmt.Errorf("L1 credo-ref load: %w", err)
		}
		for _, p := range []string{bulkPartition, bulkRefPartition} {
			if err := checkCount(ctx, dbURL, reg, p, bulkRows); err != nil {
				return bulkResult{}, err
			}
		}
		logf("L1 load of %d comments: credo %v (CPU %v, peak RSS %s MiB), ref %v (CPU %v, peak RSS %s MiB)", bulkRows,
			c.Wall.Round(time.Millisecond), c.CPU.Round(time.Millisecond), mib(c.PeakRSS),
			r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond), mib(r.PeakRSS))
		credo, ref = append(credo, c), append(ref, r)
	}
	return bulkResult{Runs: len(credo), Credo: medianRun(credo), Ref: medianRun(ref)}, nil
}

// writeBulkFile writes n comments as CSV with a header of member names, from the seed's
// generators (10 organizations, 1,000 users).
func writeBulkFile(file string, n int) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	gen := ids{rng}
	orgs := make([]string, orgCount)
	for i := range orgs {
		orgs[i] = gen.next()
	}
	users := make([]string, 1_000)
	for i := range users {
		users[i] = gen.next()
	}
	_ = w.Write([]string{"CommentIdentifier", "CommentCreatedBy", "OrganizationIdentifier", "UserIdentifier", "CommentText", "CommentCreated"})
	for range n {
		u := rng.IntN(len(users))
		_ = w.Write([]string{gen.next(), users[rng.IntN(len(users))], orgs[u%orgCount], users[u],
			sentence(rng, 6+rng.IntN(12)), when(rng, anchor).Format(time.RFC3339Nano)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// freshPartitions empties the partitions and makes their tables, as credo migrates them.
func freshPartitions(ctx context.Context, dbURL string, reg *engine.Registry, parts ...string) error {
	if err := dropPartitions(ctx, dbURL, parts); err != nil {
		return err
	}
	db, err := engine.Open(ctx, dbURL, parts, reg)
	if err != nil {
		return err
	}
	db.Close()
	return nil
}

// dropPartitions removes partitions' data: SQLite files, or PostgreSQL schemas.
func dropPartitions(ctx context.Context, dbURL string, parts []string) error {
	dir, ok := strings.CutPrefix(dbURL, "sqlite:")
	if !ok {
		return dropSchemas(ctx, dbURL, parts)
	}
	for _, p := range parts {
		for _, suffix := range []string{".db", ".db-wal", ".db-shm"} {
			if err := os.Remove(filepath.Join(dir, p+suffix)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// timeProcess runs a program to its end and measures its wall time, CPU time (getrusage) and
// peak resident set: the largest VmHWM read from /proc every 5 ms while it runs. (getrusage's
// ru_maxrss will not do: Linux counts in it the harness's own resident set, which the child
// had as a fork before it ran the program.)
func timeProcess(bin string, args ...string) (bulkRun, error) {
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return bulkRun{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var run bulkRun
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if m, err := load.ReadMemory(cmd.Process.Pid); err == nil {
			run.PeakRSS = max(run.PeakRSS, m.Peak)
		}
		select {
		case err := <-done:
			run.Wall = time.Since(start)
			if err != nil {
				return run, fmt.Errorf("%w: %s", err, strings.TrimSpace(out.String()))
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				run.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			return run, nil
		case <-tick.C:
		}
	}
}

func checkCount(ctx context.Context, dbURL string, reg *engine.Registry, p string, want int) error {
	db, err := engine.Open(ctx, dbURL, []string{p}, reg)
	if err != nil {
		return err
	}
	defer db.Close()
	st, _ := db.Store(p)
	n, err := st.Count(ctx, reg.MustByName("UserComment"), engine.Query{}, engine.AllOrganizations())
	if err != nil {
		return err
	}
	if n != int64(want) {
		return fmt.Errorf("L1: partition %s holds %d comments after the load, want %d", p, n, want)
	}
	return nil
}

// medianRun is the run of median wall time (its own peak RSS with it).
func medianRun(runs []bulkRun) bulkRun {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b bulkRun) int { return int(a.Wall - b.Wall) })
	return s[len(s)/2]
}
