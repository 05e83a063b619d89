package people_test

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"credo/engine"
)

// memoryRows is an import of six engine chunks (5,000 rows each).
const memoryRows = 30_000

// rowHeapLimit bounds the growth of the heap in use per row while an import runs: the body,
// the rows decoded, what the checks learn and one chunk's drafts came to about 2.0 KB a row
// (30,000 rows, both stores); with every row's drafts built before the first insert, 5.6 KB.
const rowHeapLimit = 3 << 10

// TestImportMemory imports memoryRows rows while sampling the heap in use, and fails when it
// grows by rowHeapLimit a row or more (both stores). -short skips it.
func TestImportMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: large import skipped")
	}
	body := encode(t, goodRows(memoryRows))
	eachStore(t, func(t *testing.T, st *engine.Store) {
		var code int
		base, peak := heapPeak(func() { code = post(t, st, operatorA, body, "application/json").Code })
		if code != http.StatusOK {
			t.Fatalf("import: %d", code)
		}
		perRow := (peak - base) / memoryRows
		t.Logf("%d rows: heap in use before %.1f MiB, peak %.1f MiB: %d bytes a row", memoryRows, mib(base), mib(peak), perRow)
		if perRow >= rowHeapLimit {
			t.Errorf("the heap in use grew by %d bytes a row, want under %d", perRow, rowHeapLimit)
		}
	})
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// heapPeak runs fn while sampling HeapInuse every millisecond, at GOGC=25 so that the heap
// follows what fn keeps rather than the garbage that the default pacing lets pile up.
func heapPeak(fn func()) (base, peak uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak = ms.HeapInuse, ms.HeapInuse
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			peak = max(peak, s.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	return base, peak
}
