package engine

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// Count returns how many records match q within scope.
func (s *Store) Count(ctx context.Context, r *Resource, q Query, scope Scope) (int64, error) {
	if err := scope.check(); err != nil {
		return 0, fmt.Errorf("engine: count %s: %w", r.Name, err)
	}
	q.org = scope.orgFor(r)
	return s.count(ctx, r, q)
}

func (s *Store) count(ctx context.Context, r *Resource, q Query) (int64, error) {
	q.Fields, q.Sort, q.Take, q.Page = nil, nil, 0, 0
	n, err := s.countRows(ctx, shape("count", r, q), condValues(q), func(v []any) *gorm.DB {
		return s.where(s.from(ctx, r), r, withValues(q, v))
	})
	if err != nil {
		return 0, fmt.Errorf("engine: count %s: %w", r.Name, translate(r, err))
	}
	return n, nil
}

// List returns one page of q within scope and the total number of matches. A first page
// shorter than Take is the whole result, so the count statement is skipped.
func (s *Store) List(ctx context.Context, r *Resource, q Query, scope Scope) ([]Record, int64, error) {
	if err := scope.check(); err != nil {
		return nil, 0, fmt.Errorf("engine: list %s: %w", r.Name, err)
	}
	q.org = scope.orgFor(r)
	recs := make([]Record, 0, min(q.Take, 64))
	err := s.stream(ctx, r, q, func(rec Record) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if q.Page == 1 && len(recs) < q.Take {
		return recs, int64(len(recs)), nil
	}
	total, err := s.count(ctx, r, q)
	return recs, total, err
}

// Stream calls fn for every record of q's page within scope (every match when q.Take is 0),
// reading rows one by one so that memory stays flat whatever the size.
//
// A page (q.Take > 0) is one statement within the store's timeout; a stream of every match
// must instead receive each row within it (see progress), so that an export's time can grow
// with the table.
func (s *Store) Stream(ctx context.Context, r *Resource, q Query, scope Scope, fn func(Record) error) error {
	if err := scope.check(); err != nil {
		return fmt.Errorf("engine: list %s: %w", r.Name, err)
	}
	q.org = scope.orgFor(r)
	return s.stream(ctx, r, q, fn)
}

func (s *Store) stream(ctx context.Context, r *Resource, q Query, fn func(Record) error) error {
	var prog *progress
	if q.Take == 0 {
		var stop func()
		ctx, prog, stop = s.streamProgress(ctx)
		defer stop()
	}
	rows, err := s.query(ctx, shape("list", r, q), condValues(q), func(v []any) *gorm.DB {
		return s.listQuery(ctx, r, withValues(q, v))
	})
	prog.got()
	if err != nil {
		return fmt.Errorf("engine: list %s: %w", r.Name, translate(r, prog.check(err)))
	}
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
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("engine: list %s: %w", r.Name, translate(r, prog.check(err)))
	}
	return nil
}
