package people_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"credo/engine"
)

// TestImportListsTheFirstProblems: a body of 50,000 bad rows (200,000 problems) is answered
// by a problem document listing the first engine.MaxRowProblems problems by row, its Detail
// counting every problem and row and those not listed, where it listed every one (a 32 MiB
// body's document ran to hundreds of MiB); nothing is written (both stores).
func TestImportListsTheFirstProblems(t *testing.T) {
	const rows = 50_000
	// Row 0 is not an object (one problem); every other row lacks its four required members.
	body := "[1" + strings.Repeat(",{}", rows-1) + "]"
	eachStore(t, func(t *testing.T, st *engine.Store) {
		before := count(t, st)
		rec := post(t, st, callerA, []byte(body), "application/json")
		errs := problemOf(t, rec, http.StatusBadRequest)
		if rec.Body.Len() > 128<<10 {
			t.Errorf("the problem document is %d bytes", rec.Body.Len())
		}
		listed := 0
		for _, msgs := range errs {
			listed += len(msgs)
		}
		if listed != engine.MaxRowProblems {
			t.Errorf("%d problems listed, want the first %d", listed, engine.MaxRowProblems)
		}
		// Rows 0 to 249 whole (1 + 249 × 4), and three of row 250's, in the order checked.
		for member, want := range map[string][2]string{
			"Row":        {"the row must be a PersonImportRow object (0)", "the row must be a PersonImportRow object (0)"},
			"Identifier": {"Identifier is required (1)", "Identifier is required (250)"},
			"FirstName":  {"FirstName is required (1)", "FirstName is required (250)"},
			"LastName":   {"LastName is required (1)", "LastName is required (249)"},
		} {
			got := errs[member]
			if len(got) == 0 || got[0] != want[0] || got[len(got)-1] != want[1] {
				t.Errorf("%s: %d problems, first and last %q, want %q", member, len(got), ends(got), want)
			}
		}
		var p struct{ Detail string }
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		total := 1 + 4*(rows-1)
		want := fmt.Sprintf("%d problem(s) in %d row(s); nothing was imported; the first %d are listed, and %d more problem(s) in %d more row(s), not listed",
			total, rows, engine.MaxRowProblems, total-engine.MaxRowProblems, rows-251)
		if p.Detail != want {
			t.Errorf("Detail %q\nwant %q", p.Detail, want)
		}
		if got := count(t, st); got != before {
			t.Errorf("after a refused import %+v, want %+v", got, before)
		}
	})
}

func ends(s []string) [2]string {
	if len(s) == 0 {
		return [2]string{}
	}
	return [2]string{s[0], s[len(s)-1]}
}
