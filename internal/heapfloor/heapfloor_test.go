package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                        string
		live, stack, globals, floor uint64
		want                        int
	}{
		{name: "a live heap above the floor keeps the default", live: 64 * mib, floor: 8 * mib, want: 100},
		{name: "a live heap equal to the floor keeps the default", live: 8 * mib, floor: 8 * mib, want: 100},
		{name: "a small live heap gets the floor as headroom", live: 5 * mib, floor: 10 * mib, want: 200},
		{name: "stacks and globals count in the share", live: 4 * mib, stack: mib, globals: mib / 2, floor: 11 * mib, want: 200},
		{name: "the runtime's minimum bounds a tiny live heap", live: mib, floor: 7 * mib, want: 200},
		{name: "an empty heap is bounded", live: 0, floor: 1 << 40, want: maxPercent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percent(tc.live, tc.stack, tc.globals, tc.floor); got != tc.want {
				t.Errorf("Percent(%d, %d, %d, %d) = %d, want %d", tc.live, tc.stack, tc.globals, tc.floor, got, tc.want)
			}
		})
	}
}

// readGC returns the collector's GOGC, heap goal and live heap as runtime/metrics has them.
func readGC() (percent int, goal, live uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64()), s[1].Value.Uint64(), s[2].Value.Uint64()
}

// settle runs collections until Floor's cleanup has tuned after one of them, that is until
// the GOGC in force is what Percent says for the live heap the last cycle marked.
func settle(t *testing.T, floor uint64) (percent int, goal, live uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(20 * time.Millisecond) // the cleanup goroutine runs after the cycle
		s := []metrics.Sample{{Name: sampleNames[0]}, {Name: sampleNames[1]}, {Name: sampleNames[2]}}
		metrics.Read(s)
		want := Percent(s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), floor)
		if percent, goal, live = readGC(); percent == want {
			return percent, goal, live
		}
	}
	t.Fatalf("the GOGC in force did not follow the live heap within 10 s")
	return
}

// TestFloorFollowsTheLiveHeap runs the real collector: with a small live heap the goal is
// about the floor above it; with a live heap larger than the floor the collector is back at
// GOGC 100 (goal twice the live heap); Stop restores the GOGC in force before.
func TestFloorFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "") // t.Setenv restores it; Start must see it unset
	unsetGOGC(t)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const floor = 32 << 20
	f := Start(floor)
	if f == nil {
		t.Fatal("Start returned nil with GOGC unset")
	}
	defer f.Stop()

	percent, goal, live := settle(t, floor)
	if percent <= 100 {
		t.Errorf("GOGC %d with %d bytes live, want above 100", percent, live)
	}
	if lo, hi := live+floor*9/10, live+floor*11/10; goal < lo || goal > hi {
		t.Errorf("heap goal %d with %d bytes live, want %d ± 10%% of the floor", goal, live, live+floor)
	}

	big := make([]*[1 << 20]byte, 96) // 96 MiB live, three times the floor
	for i := range big {
		big[i] = new([1 << 20]byte)
	}
	percent, goal, live = settle(t, floor)
	runtime.KeepAlive(big)
	if percent != 100 {
		t.Errorf("GOGC %d with %d bytes live, want 100", percent, live)
	}
	if goal < 2*live*9/10 {
		t.Errorf("heap goal %d with %d bytes live, want about twice the live heap", goal, live)
	}

	debug.SetGCPercent(150) // as if set before Start: Stop restores what was there before it
	f.before = 150
	f.Stop()
	if p, _, _ := readGC(); p != 150 {
		t.Errorf("GOGC %d after Stop, want 150", p)
	}
	if f.Tune() {
		t.Error("Tune after Stop reported true: the cleanup would arm again")
	}
}

// TestGOGCFromTheEnvironmentStands: an operator's GOGC is never overridden.
func TestGOGCFromTheEnvironmentStands(t *testing.T) {
	for _, v := range []string{"100", "off", "400"} {
		t.Setenv("GOGC", v)
		if f := Start(8 << 20); f != nil {
			f.Stop()
			t.Errorf("Start tuned the collector with GOGC=%s in the environment", v)
		}
	}
}

// unsetGOGC removes GOGC from the environment for the test (t.Setenv has registered its
// restoration).
func unsetGOGC(t *testing.T) {
	t.Helper()
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
}
