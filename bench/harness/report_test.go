package main

import (
	"strings"
	"testing"
	"time"

	"credo/bench/load"
)

func TestWritePairs(t *testing.T) {
	res := func(rps float64, p99 time.Duration) load.Result { return load.Result{RPS: rps, P50: p99 / 2, P99: p99} }
	var b strings.Builder
	writePairs(&b, "postgres", []pair{
		{Case: "W1", Credo: res(900, 2600*time.Microsecond), Ref: res(1000, 2*time.Millisecond)},
		{Case: "W3", Credo: res(800, time.Millisecond), Ref: res(1000, time.Millisecond)},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines:\n%s", len(lines), b.String())
	}
	if !strings.Contains(lines[2], "| 0.90 | 1.30 |") || !strings.HasSuffix(lines[2], "| met |") {
		t.Errorf("W1 at 0.9× and p99 1.3× should be met: %s", lines[2])
	}
	if !strings.Contains(lines[3], "**missed**") {
		t.Errorf("W3 at 0.8× should be missed (target 0.9×): %s", lines[3])
	}
}

func TestWriteGrowth(t *testing.T) {
	var b strings.Builder
	writeGrowth(&b, []growthRow{{Rows: 10_000, W1: 1000, W2: 500}, {Rows: 1_000_000, W1: 860, W2: 410}})
	out := b.String()
	if !strings.Contains(out, "-14.0%") || !strings.Contains(out, "-18.0%") || !strings.Contains(out, "**missed**") {
		t.Errorf("W2 fell 18%%: the growth target is missed:\n%s", out)
	}
}

func TestWriteCPU(t *testing.T) {
	var b strings.Builder
	writeCPU(&b, []pair{{Case: "W1", CredoCPU: cpuUse{server: 60 * time.Microsecond, database: 25 * time.Microsecond, driver: 14 * time.Microsecond},
		RefCPU: cpuUse{server: 40 * time.Microsecond, database: 24 * time.Microsecond, driver: 13 * time.Microsecond}}})
	if out := b.String(); !strings.Contains(out, "| W1 | 60.0 | 40.0 | 1.50 | 25.0 | 24.0 | 14.0 | 13.0 |") {
		t.Errorf("CPU table:\n%s", out)
	}
	b.Reset()
	writeCPU(&b, []pair{{Case: "W1", CredoCPU: cpuUse{server: 60 * time.Microsecond, driver: 14 * time.Microsecond},
		RefCPU: cpuUse{server: 40 * time.Microsecond, driver: 13 * time.Microsecond}}})
	if out := b.String(); !strings.Contains(out, "| W1 | 60.0 | 40.0 | 1.50 | — | — | 14.0 | 13.0 |") {
		t.Errorf("CPU table:\n%s", out)
	}
	b.Reset()
	writeCPU(&b, []pair{{Case: "W1"}})
	if b.Len() != 0 {
		t.Errorf("a run without CPU figures printed a table:\n%s", b.String())
	}
}

func TestWriteSummaryLimits(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    summary
		want []string
	}{
		{name: "postgres after the run", s: summary{Backend: "postgres", CredoMem: load.Memory{RSS: 61 << 20, Peak: 200 << 20}},
			want: []string{"| VmRSS after the run (MiB) | 61.0 | 0.0 | < 60 MiB | **missed** |", "| VmHWM, peak of the run (MiB) | 200.0 | 0.0 | — | — |"}},
		{name: "sqlite at its peak", s: summary{Backend: "sqlite", CredoMem: load.Memory{RSS: 40 << 20, Peak: 149 << 20}},
			want: []string{"| VmRSS after the run (MiB) | 40.0 | 0.0 | — | — |", "| VmHWM, peak of the run (MiB) | 149.0 | 0.0 | < 150 MiB | met |"}},
		{name: "load within 2x", s: summary{Backend: "sqlite", Bulk: bulkResult{Runs: 3, Credo: bulkRun{Wall: 2 * time.Second}, Ref: bulkRun{Wall: time.Second}}},
			want: []string{"| 2000.00 | 1000.00 | ≤ 2× the raw insert | met (2.00×) |"}},
		{name: "load past 2x", s: summary{Backend: "postgres", Bulk: bulkResult{Runs: 1, Credo: bulkRun{Wall: 2100 * time.Millisecond}, Ref: bulkRun{Wall: time.Second}}},
			want: []string{"| ≤ 2× the raw insert | **missed** (2.10×) |"}},
	} {
		var b strings.Builder
		writeSummary(&b, tt.s)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", tt.name, w, b.String())
			}
		}
	}
}
