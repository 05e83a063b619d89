package testenv

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// Heap is the heap in use while a function ran (MeasureHeap): before it, at its peak, and the
// bytes allocated meanwhile.
type Heap struct {
	Base, Peak, Allocated uint64
}

// Growth is how far the heap in use rose above its size before.
func (h Heap) Growth() uint64 { return h.Peak - h.Base }

func (h Heap) String() string {
	return fmt.Sprintf("heap in use: before %s, peak %s; allocated %s", MiB(h.Base), MiB(h.Peak), MiB(h.Allocated))
}

// MiB formats n bytes in MiB.
func MiB(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// MeasureHeap runs fn while sampling HeapInuse every millisecond. The collector runs at
// GOGC=25 meanwhile, so that the heap in use follows what fn keeps rather than how much
// garbage the default pacing (GOGC=100: up to the live heap again) lets pile up.
func MeasureHeap(fn func()) Heap {
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := Heap{Base: ms.HeapInuse, Peak: ms.HeapInuse}
	total := ms.TotalAlloc
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			h.Peak = max(h.Peak, s.HeapInuse)
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
	runtime.ReadMemStats(&ms)
	h.Peak = max(h.Peak, ms.HeapInuse)
	h.Allocated = ms.TotalAlloc - total
	return h
}
