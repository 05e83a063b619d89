package engine

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"credo/resources"
)

// TestMeasureConcurrentImports is a measurement, not a check (CREDO_MEASURE_IMPORTS=rows runs
// it on PostgreSQL): 8 clients load one chunk of 50 widgets each, again and again for 10 s,
// into a table of that many rows (loaded first, as one large load), as 8 clients import people into a populated partition; it
// logs the loads done and their latencies. While every load ran ANALYZE, whose lock conflicts
// with itself, the loads waited for each other's commit.
func TestMeasureConcurrentImports(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("CREDO_MEASURE_IMPORTS"))
	pg := os.Getenv("CREDO_TEST_POSTGRES")
	if rows == 0 || pg == "" {
		t.Skip("a measurement: set CREDO_MEASURE_IMPORTS=rows (and CREDO_TEST_POSTGRES)")
	}
	reg, err := Load(resources.FS, os.DirFS("../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	w := reg.MustByName("Widget")
	ctx := context.Background()
	widgets := func(n int, prefix string) []Draft { return widgetDrafts(w, n, prefix+"-") }
	p := "measure" + NewID()[24:32]
	db, err := Open(ctx, pg, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := db.Store(p)
	defer s.db.Exec("DROP SCHEMA " + quote(p) + " CASCADE")
	// The seed is the large load that the load's ANALYZEs keep fast: into a table of one
	// analyzed record (130 s for 100,000 widgets without them).
	if err := s.InsertAll(ctx, w, widgets(1, "one"), AllOrganizations()); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec("ANALYZE " + s.Table(w)).Error; err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.InsertAll(ctx, w, widgets(rows, "seed"), AllOrganizations()); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d widgets into a table of one analyzed record in %v", rows, time.Since(start).Round(time.Millisecond))
	if err := s.db.Exec("ANALYZE " + s.Table(w)).Error; err != nil {
		t.Fatal(err)
	}

	const clients, each = 8, 50
	var mu sync.Mutex
	var lat []time.Duration
	end := time.Now().Add(10 * time.Second)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				t0 := time.Now()
				if err := s.InsertAll(ctx, w, widgets(each, fmt.Sprintf("c%d-%d", c, i)), AllOrganizations()); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	if len(lat) == 0 {
		t.Fatal("no load completed")
	}
	q := func(f float64) time.Duration { return lat[int(f*float64(len(lat)-1))].Round(time.Millisecond) }
	t.Logf("%d clients: %d loads of %d rows in 10 s; latency p50 %v, p90 %v, max %v", clients, len(lat), each, q(0.5), q(0.9), q(1))
}
