package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"credo/bench/load"
)

// pair is one case measured on credo and on the reference server.
type pair struct {
	Case       string
	Credo, Ref load.Result
	// CredoCPU and RefCPU are the CPU time (user and system) per request of each server, and
	// of the load driver and the database backends while it was loaded, over the rounds
	// without warm-up; zero when every round had one.
	CredoCPU, RefCPU cpuUse
}

// goal is an issue-6 target on a case: throughput at least MinThroughput× the reference and,
// when MaxP99 > 0, p99 at most MaxP99× the reference.
type goal struct {
	MinThroughput, MaxP99 float64
}

// goals lists the targets per backend and case (issue 15, which raised issue 6's).
var goals = map[string]map[string]goal{
	"postgres": {"W1": {0.9, 1.3}, "W2": {0.9, 1.3}, "W3": {0.9, 0}, "W4": {0.9, 1.3}},
	"sqlite":   {"W1": {0.9, 0}, "W2": {0.85, 0}, "W3": {1.0, 0}, "W4": {0.85, 0}},
}

// Limits on memory, start-up and bulk loads (issues 6 and 15).
const (
	maxStartup = time.Second
	// maxGrowth is the largest change of W1 and W2 throughput from the small to the large table.
	maxGrowth = 0.15
	// maxBulk is the longest credo load may take, as a multiple of the raw bulk insert's time.
	maxBulk = 2.0
)

// memoryLimit is, per backend, the limit on credo's resident set: after the run on
// PostgreSQL, at its peak on SQLite (whose page caches are part of the process).
var memoryLimit = map[string]struct {
	bytes int64
	peak  bool
}{"postgres": {60 << 20, false}, "sqlite": {150 << 20, true}}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func mib(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

// writePairs renders the credo/reference table of one backend with each case's target.
func writePairs(w io.Writer, backend string, pairs []pair) {
	fmt.Fprintf(w, "| case | credo req/s | credo p50 ms | credo p99 ms | ref req/s | ref p50 ms | ref p99 ms | req/s ratio | p99 ratio | target | result |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, p := range pairs {
		tr := ratio(p.Credo.RPS, p.Ref.RPS)
		pr := ratio(float64(p.Credo.P99), float64(p.Ref.P99))
		target, result := "—", "—"
		if g, ok := goals[backend][p.Case]; ok {
			met := tr >= g.MinThroughput
			target = fmt.Sprintf("≥ %g×", g.MinThroughput)
			if g.MaxP99 > 0 {
				target += fmt.Sprintf(", p99 ≤ %.1f×", g.MaxP99)
				met = met && pr <= g.MaxP99
			}
			result = verdict(met)
		}
		if p.Credo.Errors > 0 || p.Ref.Errors > 0 {
			result += fmt.Sprintf(" (errors: credo %d, ref %d)", p.Credo.Errors, p.Ref.Errors)
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %.0f | %s | %s | %.2f | %.2f | %s | %s |\n", p.Case,
			p.Credo.RPS, ms(p.Credo.P50), ms(p.Credo.P99), p.Ref.RPS, ms(p.Ref.P50), ms(p.Ref.P99), tr, pr, target, result)
	}
}

// writeCPU renders the CPU time per request of each server, and of the database backends and
// the load driver while it was loaded: the throughput ratio depends on their sum when the
// machine's CPUs are shared by all three.
func writeCPU(w io.Writer, pairs []pair) {
	if len(pairs) == 0 || pairs[0].CredoCPU.server == 0 {
		return
	}
	fmt.Fprintf(w, "| case | credo CPU µs/request | ref CPU µs/request | ratio | database, for credo | database, for ref | load driver, for credo | load driver, for ref |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range pairs {
		if p.CredoCPU.server == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.2f | %s | %s | %.1f | %.1f |\n", p.Case, us(p.CredoCPU.server), us(p.RefCPU.server),
			ratio(float64(p.CredoCPU.server), float64(p.RefCPU.server)), usOrDash(p.CredoCPU.database), usOrDash(p.RefCPU.database),
			us(p.CredoCPU.driver), us(p.RefCPU.driver))
	}
}

// usOrDash renders microseconds, or a dash for a time not measured (SQLite's database is
// inside the server).
func usOrDash(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", us(d))
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// growthRow is W1 and W2 throughput of one table size.
type growthRow struct {
	Rows         int
	Partition    string
	W1, W2       float64
	RefW1, RefW2 float64
}

// writeGrowth renders the growth check: W1 and W2 per table size and the change from the first.
func writeGrowth(w io.Writer, rows []growthRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "| comments | credo W1 req/s | change | credo W2 req/s | change | ref W1 req/s | ref W2 req/s | target | result |\n")
	fmt.Fprintf(w, "|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	base := rows[0]
	for i, r := range rows {
		c1, c2 := ratio(r.W1, base.W1)-1, ratio(r.W2, base.W2)-1
		target, result := "—", "—"
		if i == len(rows)-1 && i > 0 {
			target = fmt.Sprintf("change within ±%.0f%% at 1,000,000", maxGrowth*100)
			ok := abs(c1) < maxGrowth && abs(c2) < maxGrowth
			result = verdict(ok)
			if r.Rows < 1_000_000 {
				result += " (1,000,000 not run: -large)"
			}
		}
		fmt.Fprintf(w, "| %d | %.0f | %+.1f%% | %.0f | %+.1f%% | %.0f | %.0f | %s | %s |\n", r.Rows, r.W1, c1*100, r.W2, c2*100, r.RefW1, r.RefW2, target, result)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// summary is everything one backend's run measured besides the pairs.
type summary struct {
	Backend          string
	Auth             bool
	CredoStartup     time.Duration
	RefStartup       time.Duration
	CredoMem, RefMem load.Memory
	Export           [2]exportResult // credo, ref
	ExportRows       int
	Bulk             bulkResult
}

func writeSummary(w io.Writer, s summary) {
	fmt.Fprintf(w, "| measure | credo | ref | target | result |\n|---|---:|---:|---|---|\n")
	fmt.Fprintf(w, "| start-up to first served request (ms) | %s | %s | < %v | %s |\n", ms(s.CredoStartup), ms(s.RefStartup), maxStartup, verdict(s.CredoStartup < maxStartup))
	lim := memoryLimit[s.Backend]
	rssTarget, peakTarget, rssResult, peakResult := fmt.Sprintf("< %d MiB", lim.bytes>>20), "—", verdict(s.CredoMem.RSS < lim.bytes), "—"
	if lim.peak {
		rssTarget, peakTarget, rssResult, peakResult = "—", rssTarget, "—", verdict(s.CredoMem.Peak < lim.bytes)
	}
	fmt.Fprintf(w, "| VmRSS after the run (MiB) | %s | %s | %s | %s |\n", mib(s.CredoMem.RSS), mib(s.RefMem.RSS), rssTarget, rssResult)
	fmt.Fprintf(w, "| VmHWM, peak of the run (MiB) | %s | %s | %s | %s |\n", mib(s.CredoMem.Peak), mib(s.RefMem.Peak), peakTarget, peakResult)
	if b := s.Bulk; b.Runs > 0 {
		r := ratio(float64(b.Credo.Wall), float64(b.Ref.Wall))
		fmt.Fprintf(w, "| L1 load of %d comments from CSV, whole process: median of %d (ms) | %s | %s | ≤ %.0f× the raw insert | %s (%.2f×) |\n",
			bulkRows, b.Runs, ms(b.Credo.Wall), ms(b.Ref.Wall), maxBulk, verdict(r <= maxBulk), r)
		fmt.Fprintf(w, "| L1 CPU time of the loading process, user + system (ms) | %s | %s | — | — |\n", ms(b.Credo.CPU), ms(b.Ref.CPU))
		fmt.Fprintf(w, "| L1 peak RSS of the loading process (MiB) | %s | %s | — | — |\n", mib(b.Credo.PeakRSS), mib(b.Ref.PeakRSS))
	}
	c, r := s.Export[0], s.Export[1]
	if c.Runs > 0 {
		how := "export + download"
		if c.Mode == "list" {
			how = "CSV list pages of 1,000"
		}
		fmt.Fprintf(w, "| W5 %d gradebooks as CSV, %s: median of %d (ms) | %s | %s | — | ratio %.2f |\n", s.ExportRows, how, c.Runs, ms(c.Median), ms(r.Median), ratio(float64(r.Median), float64(c.Median)))
		fmt.Fprintf(w, "| W5 bytes | %d | %d | — | — |\n", c.Bytes, r.Bytes)
		fmt.Fprintf(w, "| W5 peak VmRSS during the exports (MiB) | %s | %s | — | — |\n", mib(c.PeakRSS), mib(r.PeakRSS))
	}
}

// authNote says how credo was called.
func authNote(auth bool) string {
	if auth {
		return "authentication on (operator bearer token on every request)"
	}
	return "authentication **off**: this credo serves v2 routes without a token (not yet wired)"
}

// writeBackend renders one backend's section.
func writeBackend(w io.Writer, s summary, pairs []pair, growth []growthRow, cfg *config) {
	fmt.Fprintf(w, "\n### %s\n\n", s.Backend)
	fmt.Fprintf(w, "%d connections, %v per case and server after %v warm-up, in %d rounds alternating credo and ref; %s.\n\n",
		cfg.conns, cfg.duration, cfg.warmup, cfg.rounds, authNote(s.Auth))
	writePairs(w, s.Backend, pairs)
	if len(pairs) > 0 && pairs[0].CredoCPU.server > 0 {
		fmt.Fprintf(w, "\nCPU time per request (user + system, from /proc/<pid>/stat; rounds after the first) of each server, and of the database's backends and the load driver while it was loaded:\n\n")
		writeCPU(w, pairs)
	}
	fmt.Fprintln(w)
	writeSummary(w, s)
	if len(growth) > 0 {
		fmt.Fprintf(w, "\nGrowth (100 comments per user at every size):\n\n")
		writeGrowth(w, growth)
	}
	var errs []string
	for _, p := range pairs {
		for _, r := range []struct {
			who string
			res load.Result
		}{{"credo", p.Credo}, {"ref", p.Ref}} {
			if r.res.FirstError != "" {
				errs = append(errs, fmt.Sprintf("%s %s: %s", p.Case, r.who, r.res.FirstError))
			}
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(w, "\nFirst errors:\n\n- %s\n", strings.Join(errs, "\n- "))
	}
}
