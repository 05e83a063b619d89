package people_test

import (
	"net/http"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
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
		m := testenv.MeasureHeap(func() { code = post(t, st, operatorA, body, "application/json").Code })
		if code != http.StatusOK {
			t.Fatalf("import: %d", code)
		}
		perRow := m.Growth() / memoryRows
		t.Logf("%d rows: %s; %d bytes a row", memoryRows, m, perRow)
		if perRow >= rowHeapLimit {
			t.Errorf("the heap in use grew by %d bytes a row, want under %d", perRow, rowHeapLimit)
		}
	})
}
