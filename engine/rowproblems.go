package engine

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
)

// MaxRowProblems bounds the problems of a file's rows (a credo load, a people import) that are
// kept and reported: the first ones by row; the rest are counted. A file of millions of bad rows
// (`;`-separated data under a `,` header) built its problems up in memory and on the
// operator's terminal, or in a problem document, without limit.
const MaxRowProblems = 1000

// RowProblems collects the problems of a file's rows in bounded memory: the first
// MaxRowProblems by row (each row's in the order added), the number of all problems, and which
// rows have any. The zero value is empty and ready to use.
//
// Memory holds at most twice MaxRowProblems problems, and one bit per row up to the last row
// with a problem (12 MiB for a hundred million rows), whatever the number of problems.
type RowProblems struct {
	list []RowError
	// sorted is true while list is in row order (stable) and at most MaxRowProblems long.
	sorted bool
	total  int
	rows   []uint64 // bit r%64 of rows[r/64]: row r has a problem
}

// Add records a problem of row e.Row (0-based; a negative row is a problem of the whole file).
func (p *RowProblems) Add(e RowError) {
	p.total++
	p.mark(e.Row)
	p.list = append(p.list, e)
	p.sorted = false
	if len(p.list) >= 2*MaxRowProblems {
		p.trim()
	}
}

// AddError records err as the problems of row: one per member message of a ValidationError,
// else err's message.
func (p *RowProblems) AddError(row int, err error) {
	var v *ValidationError
	if errors.As(err, &v) && len(v.Fields) > 0 {
		for _, m := range v.Members() {
			for _, msg := range v.Fields[m] {
				p.Add(RowError{Row: row, Member: m, Msg: msg})
			}
		}
		return
	}
	p.Add(RowError{Row: row, Msg: err.Error()})
}

// Merge adds every problem of q, each mapped by m (nil: as it is), which may change its row
// (the row of the file that a row of q stands for), member and message: the problems q lists
// are added, and those it only counts are counted, in their mapped rows.
func (p *RowProblems) Merge(q *RowProblems, m func(RowError) RowError) {
	if m == nil {
		m = func(e RowError) RowError { return e }
	}
	listed := q.List()
	for _, e := range listed {
		p.Add(m(e))
	}
	p.total += q.total - len(listed)
	for w, word := range q.rows {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			p.mark(m(RowError{Row: w*64 + b}).Row)
		}
	}
}

// mark records that row has a problem.
func (p *RowProblems) mark(row int) {
	if row < 0 {
		return
	}
	w := row / 64
	if w >= len(p.rows) {
		p.rows = append(p.rows, make([]uint64, w+1-len(p.rows))...)
	}
	p.rows[w] |= 1 << (row % 64)
}

// trim keeps the first MaxRowProblems problems by row.
func (p *RowProblems) trim() {
	sort.SliceStable(p.list, func(i, j int) bool { return p.list[i].Row < p.list[j].Row })
	if len(p.list) > MaxRowProblems {
		clear(p.list[MaxRowProblems:])
		p.list = p.list[:MaxRowProblems]
	}
	p.sorted = true
}

// List returns the problems kept, in row order: all of them, or the first MaxRowProblems.
func (p *RowProblems) List() []RowError {
	if !p.sorted {
		p.trim()
	}
	return p.list
}

// Len returns the number of problems, listed or not.
func (p *RowProblems) Len() int { return p.total }

// Rows returns the number of rows with a problem, listed or not.
func (p *RowProblems) Rows() int {
	n := 0
	for _, w := range p.rows {
		n += bits.OnesCount64(w)
	}
	return n
}

// Unlisted says what List leaves out: "" when it lists every problem, else "and N more
// problems in M more rows, not listed" (M counts the rows of which no problem is listed).
func (p *RowProblems) Unlisted() string {
	listed := p.List()
	if len(listed) == p.total {
		return ""
	}
	shown := 0
	for i, e := range listed {
		if e.Row >= 0 && (i == 0 || listed[i-1].Row != e.Row) {
			shown++
		}
	}
	return fmt.Sprintf("and %d more problem(s) in %d more row(s), not listed", p.total-len(listed), p.Rows()-shown)
}
