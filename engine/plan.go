package engine

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
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
	plans map[string]*plan
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

// planned returns the plan for key, building it with build (given sentinel values) and finish
// (the dry-run finisher, e.g. Find or Count) on first use. nil means: build the query anew.
func (s *Store) planned(key string, n int, build func(values []any) *gorm.DB, finish func(*gorm.DB) *gorm.DB) *plan {
	s.plans.mu.RLock()
	p, ok := s.plans.plans[key]
	s.plans.mu.RUnlock()
	if ok {
		return p
	}
	vals := make([]any, n)
	for i := range vals {
		vals[i] = sentinel(i)
	}
	stmt := finish(build(vals).Session(&gorm.Session{DryRun: true})).Statement
	if stmt.Error == nil {
		p = newPlan(stmt, n)
	}
	s.plans.mu.Lock()
	if s.plans.plans == nil || len(s.plans.plans) >= maxPlans {
		s.plans.plans = map[string]*plan{}
	}
	s.plans.plans[key] = p
	s.plans.mu.Unlock()
	return p
}

// rowSet is what a read iterates: *sql.Rows, or pgx's rows through pgxRowSet.
type rowSet interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// pgxRowSet gives pgx.Rows the Close of database/sql, which also ends the statement's deadline.
type pgxRowSet struct {
	pgx.Rows
	cancel context.CancelFunc
}

func (r pgxRowSet) Close() error {
	r.Rows.Close()
	r.cancel()
	return r.Rows.Err()
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
	rows, err := q.s.pool.Query(ctx, sql, args...)
	if err != nil {
		cancel()
		return nil, err
	}
	return pgxRowSet{Rows: rows, cancel: cancel}, nil
}

func (q pgxQuerier) count(ctx context.Context, sql string, args []any, n *int64) error {
	ctx, cancel := q.s.statement(ctx)
	defer cancel()
	return q.s.pool.QueryRow(ctx, sql, args...).Scan(n)
}

func (q pgxQuerier) exec(ctx context.Context, sql string, args []any) (int64, error) {
	ctx, cancel := q.s.statement(ctx)
	defer cancel()
	tag, err := q.s.pool.Exec(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// sqlQuerier runs statements through database/sql.
type sqlQuerier struct{ s *Store }

func (q sqlQuerier) query(ctx context.Context, sql string, args []any) (rowSet, error) {
	return q.s.db.Statement.ConnPool.QueryContext(ctx, sql, args...)
}

func (q sqlQuerier) count(ctx context.Context, sql string, args []any, n *int64) error {
	return q.s.db.Statement.ConnPool.QueryRowContext(ctx, sql, args...).Scan(n)
}

func (q sqlQuerier) exec(ctx context.Context, sql string, args []any) (int64, error) {
	res, err := q.s.db.Statement.ConnPool.ExecContext(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// query runs a read: through its plan when the shape has one, else through GORM.
func (s *Store) query(ctx context.Context, key string, values []any, build func(values []any) *gorm.DB) (rowSet, error) {
	ctx = s.detach(ctx)
	if key != "" {
		if p := s.planned(key, len(values), build, findAll); p != nil {
			return s.querier().query(ctx, p.sql, p.args(values))
		}
	}
	return build(values).WithContext(ctx).Rows()
}

// countRows runs a count query like query.
func (s *Store) countRows(ctx context.Context, key string, values []any, build func(values []any) *gorm.DB) (int64, error) {
	var n int64
	ctx = s.detach(ctx)
	if key != "" {
		if p := s.planned(key, len(values), build, func(tx *gorm.DB) *gorm.DB { return tx.Count(&n) }); p != nil {
			err := s.querier().count(ctx, p.sql, p.args(values), &n)
			return n, err
		}
	}
	err := build(values).WithContext(ctx).Count(&n).Error
	return n, err
}

// insertRow writes one prepared record through the insert plan of r. A record whose key is
// taken is a conflict naming the key, whatever unique constraint it also breaks (see
// onKeyConflict).
func (s *Store) insertRow(ctx context.Context, r *Resource, rec Record) error {
	ctx = s.detach(ctx)
	var n int64
	if p := s.insertPlan(r); p != nil {
		values := make([]any, len(r.Fields))
		for i, f := range r.Fields {
			values[i] = rec[f.Index]
		}
		var err error
		if n, err = s.querier().exec(ctx, p.sql, p.args(values)); err != nil {
			return err
		}
	} else {
		tx := s.db.WithContext(ctx).Table(s.TableName(r)).Clauses(onKeyConflict(r)).Create(columnsOf(r, rec))
		if tx.Error != nil {
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

// insertPlan returns the plan of a single-row insert into r, taking r.Fields' values in order.
func (s *Store) insertPlan(r *Resource) *plan {
	build := func([]any) *gorm.DB { return s.db.Table(s.TableName(r)).Clauses(onKeyConflict(r)) }
	create := func(tx *gorm.DB) *gorm.DB {
		cols := make(map[string]any, len(r.Fields))
		for i, f := range r.Fields {
			cols[f.Column] = sentinel(i)
		}
		return tx.Create(cols)
	}
	return s.planned("insert|"+r.Name, len(r.Fields), build, create)
}

// InsertSQL returns the SQL of a single-row insert into r (golden tests); "" when it has no plan.
func (s *Store) InsertSQL(r *Resource) string {
	if p := s.insertPlan(r); p != nil {
		return p.sql
	}
	return ""
}

func findAll(tx *gorm.DB) *gorm.DB { return tx.Find(&[]map[string]any{}) }

// shape describes a query for the plan cache, or returns "" when its values do not pass
// through to the statement unchanged (datetimes and substrings are rewritten on the way).
func shape(op string, r *Resource, q Query) string {
	var b strings.Builder
	b.Grow(96)
	b.WriteString(op)
	b.WriteByte('|')
	b.WriteString(r.Name)
	for _, c := range q.Conds {
		if !c.Field.Stored() || c.Field.Type == TypeDateTime || (c.Op != MatchEq && c.Op != MatchGte && c.Op != MatchLt) {
			return ""
		}
		b.WriteByte('|')
		b.WriteString(c.Field.Name)
		b.WriteByte(' ')
		b.WriteString(string(c.Op))
	}
	b.WriteString("|f")
	if len(q.Fields) > 0 && len(q.Fields) == len(r.Output) && &q.Fields[0] == &r.Output[0] {
		b.WriteString(" *") // the full record: most shapes, and long
	} else {
		for _, f := range q.Fields {
			b.WriteByte(' ')
			b.WriteString(f.Name)
		}
	}
	b.WriteString("|s")
	for _, t := range q.Sort {
		b.WriteByte(' ')
		b.WriteString(t.Field.Name)
		if t.Desc {
			b.WriteString(" desc")
		}
	}
	b.WriteByte('|')
	b.WriteString(strconv.Itoa(q.Take))
	if q.peek {
		b.WriteByte('+')
	}
	if q.zone != zoneAll {
		b.WriteString(" zone ")
		b.WriteString(strconv.Itoa(int(q.zone)))
	}
	if q.After != nil {
		// The position's values are bind parameters, but a NULL among them changes the SQL.
		b.WriteString(" after ")
		for _, v := range q.After {
			if v == nil {
				b.WriteByte('n')
			} else {
				b.WriteByte('v')
			}
		}
	} else {
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(q.Page))
	}
	if q.org != "" {
		b.WriteString(" org")
	}
	return b.String()
}

// condValues lists q's values in the order the builders consume them: conditions, the
// organization, then the position's values that are not NULL.
func condValues(q Query) []any {
	vals := make([]any, 0, len(q.Conds)+1+len(q.After))
	for _, c := range q.Conds {
		vals = append(vals, c.Value)
	}
	if q.org != "" {
		vals = append(vals, q.org)
	}
	for _, v := range q.After {
		if v != nil {
			vals = append(vals, v)
		}
	}
	return vals
}

// withValues returns q with its condition values, organization and position taken from vals.
func withValues(q Query, vals []any) Query {
	conds := make([]Cond, len(q.Conds))
	for i, c := range q.Conds {
		c.Value = vals[i]
		conds[i] = c
	}
	q.Conds = conds
	n := len(conds)
	if q.org != "" {
		q.org, _ = vals[n].(string)
		n++
	}
	if q.After != nil {
		after := make(Cursor, len(q.After))
		for i, v := range q.After {
			if v != nil {
				after[i] = vals[n]
				n++
			}
		}
		q.After = after
	}
	return q
}
