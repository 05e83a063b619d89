package heapfloor

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// runtimeHeapMinimum is the Go runtime's own floor under the heap goal at GOGC 100 (4 MiB,
// scaled by GOGC/100 like the goal itself: runtime/mgcpacer.go, defaultHeapMinimum). Tune
// allows for it, or a small live heap would get a goal many times the floor.
const runtimeHeapMinimum = 4 << 20

// maxPercent bounds the GOGC that Tune sets, whatever the live heap.
const maxPercent = 10_000

// The runtime/metrics samples Tune reads: what the last cycle marked live, and the stacks and
// globals that the pacer counts in GOGC's share since Go 1.18.
var sampleNames = [...]string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes"}

// Percent returns the GOGC under which the heap goal of a live heap of live bytes, with stack
// and globals bytes to scan, is about live + floor, and never below 100 (the default: twice
// the live heap once that is larger than floor). The goal is live + (live + stack + globals)
// × GOGC/100, and at least runtimeHeapMinimum × GOGC/100.
func Percent(live, stack, globals, floor uint64) int {
	goal := float64(live) + float64(floor)
	p := math.Min(100*float64(floor)/float64(max(live+stack+globals, 1)), 100*goal/runtimeHeapMinimum)
	return int(math.Max(100, math.Min(p, maxPercent)))
}

// Floor tunes the collector after every cycle so that the heap goal stays about floor bytes
// above the live heap: a service that keeps a few megabytes live collects a few times less
// often than at GOGC 100, and one whose live heap exceeds floor is collected as at GOGC 100.
type Floor struct {
	floor   uint64
	samples []metrics.Sample
	mu      sync.Mutex
	percent int  // the GOGC set last
	before  int  // the GOGC before Start, restored by Stop
	stopped bool // guarded by mu
}

// sentinel is the object whose collection marks the end of a cycle: it holds a pointer so
// that the tiny allocator never batches it with live data (runtime.AddCleanup).
type sentinel struct{ _ *byte }

// Start begins tuning for floor bytes and returns the Floor, or nil when the environment sets
// GOGC: the operator's setting stands (GOGC=off included), and GOMEMLIMIT bounds a tuned
// collector as it bounds any other.
func Start(floor uint64) *Floor {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	f := &Floor{floor: floor, samples: make([]metrics.Sample, len(sampleNames)), percent: 100}
	for i, n := range sampleNames {
		f.samples[i].Name = n
	}
	f.before = debug.SetGCPercent(100)
	f.Tune()
	f.arm()
	return f
}

// arm registers a cleanup that runs Tune after the collector finds a fresh sentinel
// unreachable, and arms again until Stop. The runtime queues the cleanup when it sweeps the
// sentinel's span and runs it once that cycle's sweep is done (runtime/mgcsweep.go flushes the
// queue then), so the GOGC a cycle ends with is the one set after the cycle before: when the
// live heap jumps past the floor within one cycle, that cycle's goal is up to 1 + GOGC/100 of
// the cycle before (about 3.5) times its live heap instead of 2, until Tune runs. A sentinel allocated while a cycle marks is
// allocated marked and outlives that cycle, which then goes untuned; the next one tunes.
func (f *Floor) arm() {
	runtime.AddCleanup(new(sentinel), func(f *Floor) {
		if f.Tune() {
			f.arm()
		}
	}, f)
}

// Tune sets GOGC for the live heap the last cycle marked; it reports false once Stop ran.
func (f *Floor) Tune() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.samples)
	p := Percent(f.samples[0].Value.Uint64(), f.samples[1].Value.Uint64(), f.samples[2].Value.Uint64(), f.floor)
	if p != f.percent {
		debug.SetGCPercent(p)
		f.percent = p
	}
	return true
}

// Stop ends the tuning and restores the GOGC that was in force before Start.
func (f *Floor) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	debug.SetGCPercent(f.before)
}
