package gradebook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/gradebook"
	"credo/internal/openapitest"
	"credo/internal/testenv"
)

// The export and the download must keep the growth of the heap in use under growthLimit
// whatever the row count. The default row count makes every file larger than the limit, so
// that an implementation holding a whole file in memory fails.
const (
	defaultMemoryRows = 60_000
	largeMemoryRows   = 200_000
	growthLimit       = 16 << 20
)

// memoryRows is 60,000 rows (about 20 MB of CSV, 37 MB of JSON; a few seconds), or 200,000
// with CREDO_TEST_LARGE=1: inserting them takes about 20 s on SQLite, too long for every run.
func memoryRows() int {
	if os.Getenv("CREDO_TEST_LARGE") == "1" {
		return largeMemoryRows
	}
	return defaultMemoryRows
}

// TestExportMemoryFlat exports and downloads many gradebooks (see memoryRows), sampling the
// heap in use, and fails when it grows by 16 MiB or more, or when a file is not larger than
// that (the test would then prove nothing). -short skips it.
func TestExportMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: large export skipped")
	}
	rows := memoryRows()
	eachBackend(t, func(t *testing.T, e *env) {
		began := time.Now()
		insertMany(t, e.st, rows)
		t.Logf("inserted %d gradebooks in %v", rows, time.Since(began))
		for _, format := range []engine.Format{engine.FormatJSON, engine.FormatCSV} {
			var x gradebook.Export
			began := time.Now()
			m := testenv.MeasureHeap(func() { x = e.export(t, callerA, "Format="+string(format)) })
			recorded, chunks := e.stored(t, x.ExportKey)
			if !recorded {
				t.Fatalf("export %s not recorded", format)
			}
			t.Logf("export %s: %d chunks in %v; %s", format, chunks, time.Since(began), m)
			if m.Growth() >= growthLimit {
				t.Errorf("export %s: heap in use grew by %s, want under %s", format, testenv.MiB(m.Growth()), testenv.MiB(growthLimit))
			}
			var n int64
			m = testenv.MeasureHeap(func() { n = e.downloadDiscard(t, callerA, x) })
			t.Logf("download %s: %d bytes; %s", format, n, m)
			if n <= (chunks-1)*engine.ChunkSize || n > chunks*engine.ChunkSize {
				t.Errorf("download %s: %d bytes, want what %d chunks hold", format, n, chunks)
			}
			if n <= growthLimit {
				t.Errorf("download %s: %d bytes, not more than the limit: the test proves nothing", format, n)
			}
			if m.Growth() >= growthLimit {
				t.Errorf("download %s: heap in use grew by %s, want under %s", format, testenv.MiB(m.Growth()), testenv.MiB(growthLimit))
			}
		}
	})
}

// insertMany inserts n gradebooks of orgA in batches, so that the insert's own memory is
// released before the export is measured.
func insertMany(t testing.TB, st *engine.Store, n int) {
	reg, _ := registry()
	r := reg.MustByName("Gradebook")
	id, org, title, typ, ref := "GradebookIdentifier", "OrganizationIdentifier", "GradebookTitle", "GradebookType", "Reference"
	// SQLite takes at most 32,766 bind variables per statement and its driver binds them in
	// quadratic time: small batches there.
	batch := 2_000
	if st.Dialect() == engine.SQLite {
		batch = 150
	}
	for start := 0; start < n; start += batch {
		end := min(start+batch, n)
		drafts := make([]engine.Draft, 0, end-start)
		for i := start; i < end; i++ {
			d, err := r.DraftOf(map[string]any{id: gid(i + 1_000_000), org: orgA,
				title: fmt.Sprintf("Gradebook %06d, \"section\" %d", i, i%7), typ: "Scores", ref: fmt.Sprintf("REF-%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			drafts = append(drafts, d)
		}
		if err := st.InsertAll(context.Background(), r, drafts, engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
	}
}

// downloadDiscard downloads an export without keeping the body, returning its length.
func (e *env) downloadDiscard(t *testing.T, caller *auth.Principal, x gradebook.Export) int64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, x.DownloadUrl, nil)
	req = req.WithContext(auth.WithPrincipal(engine.WithStore(req.Context(), e.st), caller))
	w := &discardWriter{header: http.Header{}}
	e.api.Streaming(openapitest.Served(e.router)).ServeHTTP(w, req)
	if w.status != http.StatusOK {
		t.Fatalf("download: %d", w.status)
	}
	return w.n
}

type discardWriter struct {
	header http.Header
	status int
	n      int64
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := io.Discard.Write(p)
	w.n += int64(n)
	return n, err
}

// BenchmarkExport measures one JSON export of memoryRows gradebooks on SQLite, without
// the file system; run with -benchmem.
func BenchmarkExport(b *testing.B) {
	reg, err := registry()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	db, err := engine.Open(ctx, "sqlite:"+b.TempDir(), []string{"bench"}, reg)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	st, _ := db.Store("bench")
	insertMany(b, st, memoryRows())
	r := reg.MustByName("Gradebook")
	q, err := gradebook.ParseQuery(r, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := gradebook.WriteFile(ctx, st, r, q, engine.AllOrganizations(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
