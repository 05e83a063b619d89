package engine

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"credo/engine/backend"
)

// Plans: the hot reads (get, exists, count, list) and single inserts build their SQL with
// GORM once per shape — resource, projection, filter fields and operators, sort, page — and
// then run the same text with new values, as a prepared statement would. Building a statement
// through GORM's callbacks was a sixth of a get's CPU (and its create callbacks 15% of an
// insert's); the PostgreSQL driver caches the prepared statement by its text in turn.

// maxPlans bounds a store's plan cache; when full it is emptied and refills with the shapes in use.
const maxPlans = 2048

// sentinel marks the position of the i-th value in a statement built to become a plan.
func sentinel(i int) string { return "\x00credo-value-" + strconv.Itoa(i) }

// plan is SQL text with its bind values: constants, or slots taking the i-th value of a run.
type plan struct {
	sql    string
	consts []any
	slots  []int // -1: the constant at the same position
}

type planCache struct {
	mu    sync.RWMutex
	plans map[planKey]*plan
}

// args returns the bind values of a run with values.
func (p *plan) args(values []any) []any {
	out := make([]any, len(p.slots))
	for i, s := range p.slots {
		if s < 0 {
			out[i] = p.consts[i]
		} else {
			out[i] = storageValue(values[s])
		}
	}
	return out
}

// newPlan builds a plan from a dry-run statement made with sentinel values. It returns nil
// when a value did not reach the statement unchanged (the shape cannot be reused).
func newPlan(stmt *gorm.Statement, n int) *plan {
	p := &plan{sql: stmt.SQL.String(), consts: make([]any, len(stmt.Vars)), slots: make([]int, len(stmt.Vars))}
	seen := make([]bool, n)
	for i, v := range stmt.Vars {
		p.slots[i] = -1
		if s, ok := v.(string); ok && strings.HasPrefix(s, "\x00credo-value-") {
			k, err := strconv.Atoi(strings.TrimPrefix(s, "\x00credo-value-"))
			if err != nil || k >= n {
				return nil
			}
			p.slots[i], seen[k] = k, true
			continue
		}
		p.consts[i] = v
	}
	for _, ok := range seen {
		if !ok {
			return nil
		}
	}
	return p
}

// planned returns the plan of k, building it from a dry run of k with sentinel values on
// first use. nil means: k cannot be planned, build its statement anew with its values.
func (s *Store) planned(k planKey) *plan {
	if !k.plannable {
		return nil
	}
	s.plans.mu.RLock()
	p, ok := s.plans.plans[k]
	s.plans.mu.RUnlock()
	if ok {
		return p
	}
	n := k.arity(s.reg.MustByName(k.resource))
	vals := make([]any, n)
	for i := range vals {
		vals[i] = sentinel(i)
	}
	if stmt := s.dryRun(k, vals); stmt.Error == nil {
		p = newPlan(stmt, n)
	}
	s.plans.mu.Lock()
	if s.plans.plans == nil || len(s.plans.plans) >= maxPlans {
		s.plans.plans = map[planKey]*plan{}
	}
	s.plans.plans[k] = p
	s.plans.mu.Unlock()
	return p
}

// rowSet is what a read iterates: *sql.Rows, or the PostgreSQL pool's rows.
type rowSet = backend.Rows

// pageBatch is a page's statement and its count's, sent to PostgreSQL together (see
// backend.Page): one round trip, one write and one read on each side, where the two
// statements took two (a list with its total is the most frequent read after a get).
type pageBatch = backend.Page

// endPage ends b; a nil batch (none was sent) ends at once.
func endPage(b pageBatch) error {
	if b == nil {
		return nil
	}
	return b.End()
}

// sendPage sends the statements of q's page (Take > 0) and of its count in one batch on the
// pgx pool, within one statement deadline, and returns the page's rows. A shape without a
// plan (see planned) is built with its values by a dry run. It returns no batch where the
// store has no pgx pool or a statement cannot be built: the caller runs them one after the
// other.
func (s *Store) sendPage(ctx context.Context, r *Resource, q Query) (pageBatch, rowSet, error) {
	if s.pool == nil || q.Take == 0 {
		return nil, nil, nil
	}
	cq := countOf(q)
	pageSQL, pageArgs, ok := s.statementOf(queryPlan(planList, r, q), planValues(q))
	if !ok {
		return nil, nil, nil
	}
	countSQL, countArgs, ok := s.statementOf(queryPlan(planCount, r, cq), planValues(cq))
	if !ok {
		return nil, nil, nil
	}
	ctx, cancel := s.statement(ctx)
	return s.pool.SendPage(ctx, cancel, pageSQL, pageArgs, countSQL, countArgs)
}

// statementOf returns the SQL text and arguments of k with vals: its plan's, or a dry run's
// for a shape that has none. ok is false when the dry run fails (the caller's own run of the
// statement reports why).
func (s *Store) statementOf(k planKey, vals []any) (sql string, args []any, ok bool) {
	if p := s.planned(k); p != nil {
		return p.sql, p.args(vals), true
	}
	stmt := s.dryRun(k, vals)
	if stmt.Error != nil {
		return "", nil, false
	}
	return stmt.SQL.String(), stmt.Vars, true
}

// querier runs a plan's SQL text. On PostgreSQL, outside transactions, that is the pgx pool
// directly (database/sql's own pool and the stdlib adapter were a tenth of a get's CPU; the
// pool caches the prepared statement by its text per connection); otherwise database/sql,
// through GORM's connection pool or the transaction's connection.
type querier interface {
	query(ctx context.Context, sql string, args []any) (rowSet, error)
	// count runs a statement that answers one integer, into n.
	count(ctx context.Context, sql string, args []any, n *int64) error
	// exec runs a statement and returns how many rows it affected.
	exec(ctx context.Context, sql string, args []any) (int64, error)
}

// querier returns the store's querier (see the type).
func (s *Store) querier() querier {
	if s.pool != nil {
		return pgxQuerier{s}
	}
	return sqlQuerier{s}
}

// pgxQuerier runs statements on the pgx pool, each within the store's statement deadline.
type pgxQuerier struct{ s *Store }

func (q pgxQuerier) query(ctx context.Context, sql string, args []any) (rowSet, error) {
	ctx, cancel := q.s.statement(ctx)
	rows, err := q.s.pool.Query(ctx, cancel, sql, args)
	if err != nil {
		cancel()
		return nil, err
	}
	return rows, nil
}

func (q pgxQuerier) count(ctx context.Context, sql string, args []any, n *int64) error {
	ctx, cancel := q.s.statement(ctx)
	defer cancel()
	return q.s.pool.Count(ctx, sql, args, n)
}

func (q pgxQuerier) exec(ctx context.Context, sql string, args []any) (int64, error) {
	ctx, cancel := q.s.statement(ctx)
	defer cancel()
	return q.s.pool.Exec(ctx, sql, args)
}

// sqlQuerier runs statements through database/sql.
type sqlQuerier struct{ s *Store }

func (q sqlQuerier) query(ctx context.Context, sql string, args []any) (rowSet, error) {
	ctx = q.s.detach(ctx)
	return q.s.db.Statement.ConnPool.QueryContext(ctx, sql, args...)
}

func (q sqlQuerier) count(ctx context.Context, sql string, args []any, n *int64) error {
	ctx = q.s.detach(ctx)
	return q.s.db.Statement.ConnPool.QueryRowContext(ctx, sql, args...).Scan(n)
}

func (q sqlQuerier) exec(ctx context.Context, sql string, args []any) (int64, error) {
	ctx = q.s.detach(ctx)
	res, err := q.s.db.Statement.ConnPool.ExecContext(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// query runs a read of k with vals: through its plan when k has one, else built anew. Either
// way its statement is detached from ctx's cancellation (see detach; the querier detaches a
// planned one).
func (s *Store) query(ctx context.Context, k planKey, vals []any) (rowSet, error) {
	if p := s.planned(k); p != nil {
		return s.querier().query(ctx, p.sql, p.args(vals))
	}
	tx, _ := s.build(s.db.WithContext(s.detach(ctx)), k, vals)
	return tx.Rows()
}

// countRows runs a count of k with vals like query.
func (s *Store) countRows(ctx context.Context, k planKey, vals []any) (int64, error) {
	var n int64
	if p := s.planned(k); p != nil {
		err := s.querier().count(ctx, p.sql, p.args(vals), &n)
		return n, err
	}
	tx, _ := s.build(s.db.WithContext(s.detach(ctx)), k, vals)
	err := tx.Count(&n).Error
	return n, err
}

// insertRow writes one prepared record through the insert plan of r. A record whose key is
// taken is a conflict naming the key, whatever unique constraint it also breaks (see
// onKeyConflict).
func (s *Store) insertRow(ctx context.Context, r *Resource, rec Record) error {
	k := insertPlan(r)
	vals := make([]any, len(r.Fields))
	for i, f := range r.Fields {
		vals[i] = rec[f.Index]
	}
	var n int64
	if p := s.planned(k); p != nil {
		var err error
		if n, err = s.querier().exec(ctx, p.sql, p.args(vals)); err != nil {
			return err
		}
	} else {
		tx, _ := s.build(s.db.WithContext(s.detach(ctx)), k, vals)
		if tx = tx.Create(insertColumns(r, vals)); tx.Error != nil {
			return tx.Error
		}
		n = tx.RowsAffected
	}
	if n == 0 {
		return conflict(r, r.Key)
	}
	return nil
}

// onKeyConflict makes an insert whose key is taken insert nothing rather than fail. Both
// databases then check the key before any other unique constraint, so a record that repeats
// the key and a unique constraint at once is reported as the key's conflict on both (a failed
// insert names whichever constraint the database checked first: SQLite and PostgreSQL differ).
func onKeyConflict(r *Resource) clause.OnConflict {
	cols := make([]clause.Column, len(r.Key))
	for i, k := range r.Key {
		cols[i] = clause.Column{Name: k.Column}
	}
	return clause.OnConflict{Columns: cols, DoNothing: true}
}
