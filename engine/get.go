package engine

import (
	"context"

	"credo/internal/reqctx"
)

// Get returns the record with key, projected to fields (nil: the full record), within scope.
func (s *Store) Get(ctx context.Context, r *Resource, key []any, fields []*Field, scope Scope) (_ Record, err error) {
	defer wrap(&err, "get", r.Name, key)
	if err := scope.check(); err != nil {
		return nil, err
	}
	return s.get(ctx, r, key, fields, scope.orgFor(r))
}

func (s *Store) get(ctx context.Context, r *Resource, key []any, fields []*Field, org string) (Record, error) {
	if fields == nil {
		fields = r.Output
	}
	rows, err := s.byKey(ctx, planGet, r, key, fields, org)
	if err != nil {
		return nil, translate(s, r, err)
	}
	return s.scanOne(r, fields, rows)
}

// Exists reports whether the record with key exists within scope.
func (s *Store) Exists(ctx context.Context, r *Resource, key []any, scope Scope) (_ bool, err error) {
	defer wrap(&err, "exists", r.Name, key)
	if err := scope.check(); err != nil {
		return false, err
	}
	return s.exists(ctx, r, key, scope.orgFor(r))
}

func (s *Store) exists(ctx context.Context, r *Resource, key []any, org string) (bool, error) {
	rows, err := s.byKey(ctx, planExists, r, key, nil, org)
	if err != nil {
		return false, translate(s, r, err)
	}
	defer rows.Close()
	found := rows.Next()
	if err := rows.Err(); err != nil {
		return false, translate(s, r, err)
	}
	return found, nil
}

// byKey selects fields (nil: the constant 1) of the record with key within org.
func (s *Store) byKey(ctx context.Context, op planOp, r *Resource, key []any, fields []*Field, org string) (rowSet, error) {
	// A key lookup is one index probe: it runs to its end (within the store's timeout on
	// PostgreSQL) rather than have database/sql and the SQLite driver start two goroutines per
	// query to watch the request for cancellation. On the pgx pool the statement's context
	// already drops the cancellation (see Store.statement). A request's context comes without its
	// cancellation at no allocation (reqctx.WithoutCancel).
	if s.pool == nil {
		ctx = reqctx.WithoutCancel(ctx)
	}
	return s.query(ctx, keyPlan(op, r, fields, org), keyValues(key, org))
}

// getForUpdate reads the stored members of the record with key within org for a
// read-merge-write in a transaction (s is bound to it), so that no other writer changes the
// row between the read and the write. On PostgreSQL it locks the row (SELECT … FOR UPDATE OF
// t) until the transaction ends; on SQLite every transaction begins IMMEDIATE (see Open) and so
// already holds the database's write lock when it reads.
func (s *Store) getForUpdate(ctx context.Context, r *Resource, key []any, org string) (Record, error) {
	rows, err := s.query(ctx, keyPlan(planLock, r, nil, org), keyValues(key, org))
	if err != nil {
		return nil, translate(s, r, err)
	}
	return s.scanOne(r, r.Fields, rows)
}

// scanOne reads fields of the one record rows hold, or ErrNotFound; it closes rows.
func (s *Store) scanOne(r *Resource, fields []*Field, rows rowSet) (Record, error) {
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, translate(s, r, err)
		}
		return nil, ErrNotFound
	}
	if len(fields) == 0 || len(fields) != len(r.Output) || &fields[0] != &r.Output[0] {
		return newScanner(r, fields).scan(rows)
	}
	// A get of the whole record, the most frequent read, reuses a scanner: the record it
	// returns holds copies of the scanned values, not the scanner's destinations.
	sc, _ := r.outputScanners.Get().(*scanner)
	if sc == nil {
		sc = newScanner(r, fields)
	}
	rec, err := sc.scan(rows)
	r.outputScanners.Put(sc)
	return rec, err
}
