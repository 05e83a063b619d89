package engine_test

import (
	"fmt"
	"testing"

	"credo/engine"
)

// TestRowProblemsKeepTheFirstByRow: problems added in any order keep the first
// engine.MaxRowProblems by row, each row's in the order added; every problem and row is
// counted, and a merge maps the rows of the problems it only counts too.
func TestRowProblemsKeepTheFirstByRow(t *testing.T) {
	const rows = 3000
	var p engine.RowProblems
	for r := rows - 1; r >= 0; r-- { // last row first, two problems a row
		p.Add(engine.RowError{Row: r, Msg: "first"})
		p.Add(engine.RowError{Row: r, Msg: "second"})
	}
	list := p.List()
	if len(list) != engine.MaxRowProblems || p.Len() != 2*rows || p.Rows() != rows {
		t.Fatalf("listed %d of %d problems in %d rows, want %d of %d in %d", len(list), p.Len(), p.Rows(), engine.MaxRowProblems, 2*rows, rows)
	}
	for i, e := range list {
		if want := (engine.RowError{Row: i / 2, Msg: []string{"first", "second"}[i%2]}); e != want {
			t.Fatalf("problem %d is %+v, want %+v", i, e, want)
		}
	}
	want := fmt.Sprintf("and %d more problem(s) in %d more row(s), not listed", 2*rows-engine.MaxRowProblems, rows-engine.MaxRowProblems/2)
	if got := p.Unlisted(); got != want {
		t.Errorf("Unlisted() = %q, want %q", got, want)
	}

	// Merged with its rows moved by 10,000 after one problem of row 0.
	var q engine.RowProblems
	q.Add(engine.RowError{Row: 0, Msg: "own"})
	q.Merge(&p, func(e engine.RowError) engine.RowError { e.Row += 10_000; return e })
	if q.Len() != 2*rows+1 || q.Rows() != rows+1 || q.List()[0].Msg != "own" || q.List()[1].Row != 10_000 {
		t.Errorf("merged: %d problems in %d rows, first %+v", q.Len(), q.Rows(), q.List()[:2])
	}
	var none engine.RowProblems
	if none.Len() != 0 || none.Rows() != 0 || len(none.List()) != 0 || none.Unlisted() != "" {
		t.Errorf("the zero RowProblems is not empty")
	}
}
