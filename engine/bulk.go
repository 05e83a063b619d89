package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// RowError is one problem of one row of a bulk load, with the row's 0-based index.
type RowError struct {
	Row    int
	Member string
	Msg    string
}

// BulkError lists every problem of a bulk load; nothing was written. It is an ErrInvalid.
type BulkError struct{ Rows []RowError }

func (e *BulkError) Error() string {
	s := fmt.Sprintf("%d problem(s)", len(e.Rows))
	for i, r := range e.Rows {
		if i == 10 {
			s += fmt.Sprintf("; and %d more", len(e.Rows)-10)
			break
		}
		s += fmt.Sprintf("; %s (%d)", r.Msg, r.Row)
	}
	return s
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *BulkError) Is(target error) bool { return target == ErrInvalid }

// DecodeRow reads one CSV row (cells under header names) into a draft: a cell is parsed as its
// member's type; an empty cell is omitted (null, default or zero, as in a body).
func (r *Resource) DecodeRow(header, cells []string) (Draft, error) {
	d := r.NewDraft()
	verr := &ValidationError{}
	for i, name := range header {
		f, ok := r.byName[name]
		if !ok {
			verr.Add(name, fmt.Sprintf("%s is not a member of %s", name, r.Name))
			continue
		}
		if i >= len(cells) || cells[i] == "" || !f.Stored() || f.ReadOnly {
			continue
		}
		v, err := f.ParseText(cells[i])
		if err != nil {
			verr.Add(name, fmt.Sprintf("%s %v", name, err))
			continue
		}
		d.rec[f.Index], d.given[f.Index] = v, true
	}
	if !verr.Empty() {
		return Draft{}, verr
	}
	return d, nil
}

// DecodeArray reads a JSON array of bodies; each element goes through DecodeDraft.
func (r *Resource) DecodeArray(data []byte) ([]Draft, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, Invalid("the file must be a JSON array of %s objects: %v", r.Name, err)
	}
	drafts := make([]Draft, len(raws))
	bulk := &BulkError{}
	for i, raw := range raws {
		d, err := r.DecodeDraft(raw)
		if err != nil {
			bulk.add(i, err)
			continue
		}
		drafts[i] = d
	}
	if len(bulk.Rows) > 0 {
		return nil, bulk
	}
	return drafts, nil
}

func (e *BulkError) add(row int, err error) {
	if v, ok := err.(*ValidationError); ok && len(v.Fields) > 0 {
		for _, m := range v.Members() {
			for _, msg := range v.Fields[m] {
				e.Rows = append(e.Rows, RowError{Row: row, Member: m, Msg: msg})
			}
		}
		return
	}
	e.Rows = append(e.Rows, RowError{Row: row, Msg: err.Error()})
}

// InsertAll checks every record (CheckAll), then inserts them all in one transaction: with
// COPY on PostgreSQL, in multi-row INSERTs prepared once on SQLite. Any problem or failed
// insert writes nothing; problems carry the row index.
func (s *Store) InsertAll(ctx context.Context, r *Resource, drafts []Draft, scope Scope) error {
	return s.InsertAllProgress(ctx, r, drafts, scope, nil)
}

// InsertAllProgress is InsertAll that calls progress, when not nil, with the number of records
// written so far, every few thousand. The write check that ctx carries for r (WithWriteCheck) runs on
// every record before anything is written; its refusal is returned as it is.
func (s *Store) InsertAllProgress(ctx context.Context, r *Resource, drafts []Draft, scope Scope, progress func(written int)) (err error) {
	defer wrap(&err, "load %s", r.Name)
	bulk, err := s.CheckAll(ctx, r, drafts, scope)
	if err != nil {
		return err
	}
	if bulk != nil {
		return bulk
	}
	recs, _ := records(r, drafts) // CheckAll has checked every draft
	if check := writeCheck(ctx, r); check != nil {
		for i, rec := range recs {
			if rec == nil {
				continue
			}
			if err := check(ctx, s, r, nil, rec); err != nil {
				return fmt.Errorf("row %d: %w", i, err)
			}
		}
	}
	rows := make([]Record, 0, len(recs))
	for _, rec := range recs {
		if rec != nil {
			rows = append(rows, rec)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	err = s.Transaction(ctx, func(tx *Store) error {
		if t, ok := tx.db.Statement.ConnPool.(*pgTx); ok {
			return tx.copyRows(ctx, t, r, rows, progress)
		}
		return tx.insertRows(ctx, r, rows, progress)
	})
	return err
}

// copyRows writes rows into r's table with PostgreSQL's COPY, on the connection of the
// transaction t. COPY has no ON CONFLICT: a key that another writer stored since CheckAll
// fails the whole COPY as a unique violation, and the transaction with it. Like the
// engine's statements it does not see the caller's cancellation (see detach); its deadline
// grows with the rows: the store's timeout per 10,000 rows begun, about what the batches of
// single INSERT statements it replaces had, each within the timeout. (A 10 s deadline for
// 50,000 people was too short on this machine under load.)
func (s *Store) copyRows(ctx context.Context, t *pgTx, r *Resource, rows []Record, progress func(int)) error {
	cols := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		cols[i] = f.Column
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout*time.Duration(1+len(rows)/10000))
	defer cancel()
	src := &copySource{r: r, rows: rows, i: -1, progress: progress}
	return t.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("engine: load %s: the connection is not pgx's (%T)", r.Name, dc)
		}
		n, err := c.Conn().CopyFrom(ctx, pgx.Identifier{s.schema, r.Table}, cols, src)
		if err != nil {
			return translate(r, err)
		}
		if n < int64(len(rows)) {
			return conflict(r, r.Key)
		}
		if progress != nil {
			progress(len(rows))
		}
		return nil
	})
}

// copySource hands COPY the rows' stored values: uuids as their 16 bytes (COPY's binary
// format takes no text for them), datetimes as their stored text.
type copySource struct {
	r        *Resource
	rows     []Record
	i        int
	vals     []any
	err      error
	progress func(int)
}

func (c *copySource) Next() bool {
	c.i++
	if c.progress != nil && c.i > 0 && c.i%10000 == 0 {
		c.progress(c.i)
	}
	return c.i < len(c.rows) && c.err == nil
}

func (c *copySource) Values() ([]any, error) {
	if c.vals == nil {
		c.vals = make([]any, len(c.r.Fields))
	}
	rec := c.rows[c.i]
	for i, f := range c.r.Fields {
		v := storageValue(rec[f.Index])
		if str, ok := v.(string); ok && f.Type == TypeUUID {
			u, err := uuid.Parse(str)
			if err != nil {
				return nil, fmt.Errorf("%w: %s %q is not a uuid", ErrInvalid, f.Name, str)
			}
			v = [16]byte(u)
		}
		c.vals[i] = v
	}
	return c.vals, nil
}

func (c *copySource) Err() error { return c.err }

// bulkVars bounds the bind values of one statement of insertRows (SQLite takes 32,766).
const bulkVars = 4000

// insertRows writes rows into r's table in multi-row INSERT statements, each prepared once
// on s's transaction. A record whose key is taken inserts nothing (see onKeyConflict) and
// fails the load as a conflict.
func (s *Store) insertRows(ctx context.Context, r *Resource, rows []Record, progress func(int)) error {
	per := max(1, min(len(rows), bulkVars/len(r.Fields)))
	stmts := map[int]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	pool := s.db.Statement.ConnPool
	if s.dialect == SQLite {
		// The writer's page cache holds the indexes' pages that a load of rows in random key
		// order touches again and again; the connection's usual bound (sqliteCacheKiB) made
		// a load of 100,000 rows read and write the same pages ten times as long.
		if _, err := pool.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", sqliteBulkCacheKiB)); err != nil {
			return translate(r, err)
		}
		defer pool.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA cache_size = -%d", sqliteCacheKiB))
	}
	args := make([]any, 0, per*len(r.Fields))
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		st := stmts[end-start]
		if st == nil {
			var err error
			if st, err = pool.PrepareContext(ctx, s.insertRowsSQL(r, end-start)); err != nil {
				return translate(r, err)
			}
			stmts[end-start] = st
		}
		args = args[:0]
		for _, rec := range rows[start:end] {
			for _, f := range r.Fields {
				args = append(args, storageValue(rec[f.Index]))
			}
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return translate(r, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return translate(r, err)
		} else if n < int64(end-start) {
			return conflict(r, r.Key) // a stored record has the key of one of these
		}
		if progress != nil {
			progress(end)
		}
	}
	return nil
}

// insertRowsSQL is the INSERT of n rows of r's fields, ignoring a taken key.
func (s *Store) insertRowsSQL(r *Resource, n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + s.qualify(r.Table) + " (")
	for i, f := range r.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(f.Column))
	}
	b.WriteString(") VALUES ")
	k := 0
	for row := range n {
		if row > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for i := range r.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			k++
			if s.dialect == Postgres {
				b.WriteString("$" + strconv.Itoa(k))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	b.WriteString(" ON CONFLICT (")
	for i, f := range r.Key {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(f.Column))
	}
	b.WriteString(") DO NOTHING")
	return b.String()
}
