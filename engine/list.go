package engine

import (
	"context"
	"errors"
	"slices"
)

// Count returns how many records match q within scope.
func (s *Store) Count(ctx context.Context, r *Resource, q Query, scope Scope) (_ int64, err error) {
	defer wrap(&err, "count", r.Name, nil)
	if err := scope.check(); err != nil {
		return 0, err
	}
	q.org = scope.orgFor(r)
	return s.count(ctx, r, q)
}

func (s *Store) count(ctx context.Context, r *Resource, q Query) (int64, error) {
	q = countOf(q)
	n, err := s.countRows(ctx, queryPlan(planCount, r, q), planValues(q))
	return n, translate(s, r, err)
}

// countOf is the query that counts the matches of q, whatever its page.
func countOf(q Query) Query {
	q.Fields, q.Sort, q.Take, q.Page = nil, nil, 0, 0
	q.After, q.zone, q.peek = nil, zoneAll, false
	return q
}

// List returns one page of q within scope and the total number of matches (see ListPage).
func (s *Store) List(ctx context.Context, r *Resource, q Query, scope Scope) ([]Record, int64, error) {
	p, err := s.ListPage(ctx, r, q, scope)
	return p.Records, p.Total, err
}

// Page is one page of a list.
type Page struct {
	Records []Record
	// Total is the number of matches of the query, whatever the page.
	Total int64
	// Next is the position of the page's last record when another page follows it, nil when
	// this page is the last: the After of the next page.
	Next Cursor
}

// ListPage returns one page of q within scope — at q.After when set, else at q.Page — with
// the total number of matches and the position of the next page. A first page shorter than
// Take is the whole result, so its count is not needed: it is not run, or, where the count
// was sent with the page (sendPage), not read.
//
// The page reads one row beyond Take to learn whether a next page exists; its records may
// hold values of order columns outside q.Fields (read for the position), which the caller
// does not output.
func (s *Store) ListPage(ctx context.Context, r *Resource, q Query, scope Scope) (_ Page, err error) {
	defer wrap(&err, "list", r.Name, nil)
	if err := scope.check(); err != nil {
		return Page{}, err
	}
	q.org = scope.orgFor(r)
	terms := r.OrderTerms(q.Sort)
	pos := make([]int, len(terms))
	for i, t := range terms {
		if pos[i] = slices.Index(q.Fields, t.Field); pos[i] < 0 {
			pos[i] = len(q.Fields)
			q.Fields = append(slices.Clip(q.Fields), t.Field)
		}
	}
	q.peek = q.Take > 0
	take := q.Take
	p := Page{Records: make([]Record, 0, min(take, 64))}
	var last Cursor
	collect := func(rec Record, sc *scanner) error {
		if take == 0 || len(p.Records) < take {
			p.Records = append(p.Records, rec)
			if len(p.Records) == take {
				last = make(Cursor, len(pos))
				for i, c := range pos {
					last[i] = sc.stored(c)
				}
			}
			return nil
		}
		p.Next = last
		return errPeeked
	}
	// A position before the NULLs of the first order column reads the values after it by an
	// index range, then, when the page is not full, the NULLs (see seek).
	split := q.After != nil && s.nullsFollow(terms[0], q.After[0])
	// On the pgx pool the page and its count go to the database together (see sendPage);
	// elsewhere the count runs after the page.
	var b pageBatch
	var rows rowSet
	if split {
		q.zone = zoneValues
	} else if b, rows, err = s.sendPage(ctx, r, q); err != nil {
		return Page{}, translate(s, r, err)
	}
	if b != nil {
		err = s.read(r, q, rows, nil, collect)
	} else {
		err = s.stream(ctx, r, q, collect)
		if err == nil && split && p.Next == nil {
			nulls := q
			nulls.After, nulls.zone, nulls.Page, nulls.Take = nil, zoneNulls, 1, take-len(p.Records)
			err = s.stream(ctx, r, nulls, collect)
		}
	}
	if err != nil {
		endPage(b)
		return Page{}, err
	}
	if q.After == nil && q.Page == 1 && len(p.Records) < take {
		p.Total = int64(len(p.Records))
		return p, translate(s, r, endPage(b))
	}
	if b != nil {
		p.Total, err = b.Total()
		return p, translate(s, r, err)
	}
	p.Total, err = s.count(ctx, r, q)
	return p, err
}

// errPeeked ends a page's stream at the row beyond Take.
var errPeeked = errors.New("engine: the row beyond the page")

// Stream calls fn for every record of q's page within scope (every match when q.Take is 0),
// reading rows one by one so that memory stays flat whatever the size.
//
// A page (q.Take > 0) is one statement within the store's timeout; a stream of every match
// must instead receive each row within it (see progress), so that an export's time can grow
// with the table.
func (s *Store) Stream(ctx context.Context, r *Resource, q Query, scope Scope, fn func(Record) error) (err error) {
	defer wrap(&err, "list", r.Name, nil)
	if err := scope.check(); err != nil {
		return err
	}
	q.org = scope.orgFor(r)
	return s.stream(ctx, r, q, func(rec Record, _ *scanner) error { return fn(rec) })
}

// stream calls fn with each row of q's page and the scanner that read it.
func (s *Store) stream(ctx context.Context, r *Resource, q Query, fn func(Record, *scanner) error) error {
	var prog *progress
	if q.Take == 0 && !q.peek { // every match, not a page
		var stop func()
		ctx, prog, stop = s.streamProgress(ctx)
		defer stop()
	}
	rows, err := s.query(ctx, queryPlan(planList, r, q), planValues(q))
	prog.got()
	if err != nil {
		return translate(s, r, prog.check(err))
	}
	return s.read(r, q, rows, prog, fn)
}

// read calls fn with each row of rows, q's page, and closes rows; prog is a stream's
// progress deadline (nil for a page).
func (s *Store) read(r *Resource, q Query, rows rowSet, prog *progress, fn func(Record, *scanner) error) error {
	defer rows.Close()
	sc := newScanner(r, q.Fields)
	for {
		prog.wait()
		more := rows.Next()
		prog.got()
		if !more {
			break
		}
		rec, err := sc.scan(rows)
		if err != nil {
			return err
		}
		if err := fn(rec, sc); err != nil {
			if errors.Is(err, errPeeked) {
				return nil
			}
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return translate(s, r, prog.check(err))
	}
	return nil
}
