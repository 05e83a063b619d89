package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"credo/engine/backend"
)

// RowError is one problem of one row of a bulk load, with the row's 0-based index.
type RowError struct {
	Row    int
	Member string
	Msg    string
}

// BulkError holds the problems of a bulk load (the first MaxRowProblems listed, every one
// counted); nothing was written. It is an ErrInvalid. Undecoded counts the rows its source
// could not decode (zero Drafts): their problems are the source's to report.
type BulkError struct {
	Problems  RowProblems
	Undecoded int
}

func (e *BulkError) Error() string {
	listed := e.Problems.List()
	s := fmt.Sprintf("%d problem(s)", e.Problems.Len())
	for i, r := range listed {
		if i == 10 {
			s += fmt.Sprintf("; and %d more", e.Problems.Len()-10)
			break
		}
		s += fmt.Sprintf("; %s (%d)", r.Msg, r.Row)
	}
	if e.Undecoded > 0 {
		s += fmt.Sprintf("; %d row(s) not decoded", e.Undecoded)
	}
	return s
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *BulkError) Is(target error) bool { return target == ErrInvalid }

// CSVHeader is a checked CSV header of a resource: the member of each column.
type CSVHeader struct {
	r      *Resource
	fields []*Field
}

// CSVHeader checks a CSV header: a name that is no member of r, or a member named twice, is a
// problem of the header, each reported once with the message a JSON body gets, so that a wrong
// column is one problem rather than one per row. So is a name that breaks the text rules of
// every name in a body (U+0000, invalid UTF-8: CheckText), named quoted as a body's is (and
// cut, see ShownName).
func (r *Resource) CSVHeader(names []string) (*CSVHeader, error) {
	h := &CSVHeader{r: r, fields: make([]*Field, len(names))}
	verr := &ValidationError{}
	times := make(map[string]int, len(names))
	for i, name := range names {
		times[name]++
		f, ok := r.byName[name]
		switch problem := CheckText(name); {
		case problem != "" && times[name] == 1:
			shown := ShownName(name)
			verr.Add(shown, "the member name "+shown+" "+problem)
		case problem != "":
		case !ok && times[name] == 1:
			verr.Add(ShownName(name), notMember(name, r))
		case ok && times[name] == 2:
			verr.Add(name, givenTwice(name))
		}
		h.fields[i] = f
	}
	if !verr.Empty() {
		return nil, verr
	}
	return h, nil
}

// DecodeRow reads one CSV row (cells under the header's members) of a file of the process
// (`credo load`) into a draft, as DecodeFileDraft reads a JSON row: a cell is parsed as its
// member's type, read-only members included; an empty cell is omitted (null, default or
// zero, as in a body); a computed member's cell is ignored. A cell that does not parse is a
// problem the draft carries (Draft.Problems), which a load reports with the row's others.
func (h *CSVHeader) DecodeRow(cells []string) Draft {
	d := h.r.NewDraft()
	for i, f := range h.fields {
		if i >= len(cells) || cells[i] == "" || !f.Stored() {
			continue
		}
		v, err := f.ParseText(cells[i])
		if err != nil {
			d.fail(f.Index, f.Name, fmt.Sprintf("%s %v", f.Name, err))
			continue
		}
		d.rec[f.Index], d.given[f.Index] = v, true
	}
	return d
}

// DecodeArray reads a JSON array of bodies; each element goes through DecodeDraft. An
// element that is not a JSON object is a problem of its row; the problems of an object's
// members ride in its draft, which InsertAll reports with the row's others.
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
			bulk.Problems.AddError(i, err)
			continue
		}
		drafts[i] = d
	}
	if bulk.Problems.Len() > 0 {
		return nil, bulk
	}
	return drafts, nil
}

// bulkChunk is how many rows a bulk load checks and writes at a time; tests make it small.
var bulkChunk = 5000

// RowSource hands a bulk load its rows in order: the next row's draft; the zero Draft for a
// row its caller could not decode (the caller reports that row's problems; the load skips
// it, keeps its index and writes nothing); io.EOF after the last row. Any other error ends
// the load, and nothing is written.
type RowSource func() (Draft, error)

// Drafts returns the RowSource of drafts.
func Drafts(drafts []Draft) RowSource {
	i := 0
	return func() (Draft, error) {
		if i == len(drafts) {
			return Draft{}, io.EOF
		}
		i++
		return drafts[i-1], nil
	}
}

// BulkOptions tunes InsertFrom.
type BulkOptions struct {
	// DryRun checks every row and writes nothing, outside a transaction.
	DryRun bool
	// Progress, when not nil, is called with the number of rows read so far, after each chunk.
	Progress func(rows int)
}

// InsertAll inserts drafts with InsertFrom; any problem or failed insert writes nothing.
func (s *Store) InsertAll(ctx context.Context, r *Resource, drafts []Draft, scope Scope) error {
	_, err := s.InsertFrom(ctx, r, Drafts(drafts), scope, BulkOptions{})
	return err
}

// InsertFrom reads the rows of next and inserts them into r, all or nothing, in one
// transaction, a chunk of rows (bulkChunk) at a time: each chunk is prepared as a create
// prepares its record (keys, defaults, the caller's organization, hooks), checked (see
// checkChunk), passed to the write check that ctx carries for r (WithWriteCheck), then written:
// with COPY on PostgreSQL, in multi-row INSERTs prepared once on SQLite. Memory holds one
// chunk and, across chunks, a fixed-size hash of each key and unique tuple of the file with
// its first row. When r's table holds no row as the load begins (a first load), the keys and
// unique tuples are not looked up in it: on the table that every chunk grows, those lookups
// made a million rows' load on PostgreSQL half as long again (56 s against 38 s). A row that
// another writer stores meanwhile with a key of the load fails the write, as it would after
// the lookups.
//
// Once a row has a problem nothing more is written, but every row is still checked: the
// result is a *BulkError with the problems of the file by row (0-based; the first
// MaxRowProblems listed, every one counted, see RowProblems), and the
// transaction is rolled back. A write check's refusal (returned as it is, with its row) and a
// failed write roll it back too. On SQLite the transaction holds the writer from the first
// chunk's checks to the last row.
//
// n is the number of rows read (undecoded ones included): the rows written, or that a dry run
// found fit to write. Records of the drafts are completed in place.
func (s *Store) InsertFrom(ctx context.Context, r *Resource, next RowSource, scope Scope, opt BulkOptions) (n int, err error) {
	defer wrap(&err, "load", r.Name, nil)
	if err := scope.check(); err != nil {
		return 0, err
	}
	if opt.DryRun {
		l := s.newBulkLoad(ctx, r, scope, opt, false)
		err := l.run(ctx, next)
		return l.n, err
	}
	var l *bulkLoad
	var failed error // why the transaction was rolled back
	err = s.Transaction(ctx, func(tx *Store) error {
		l = tx.newBulkLoad(ctx, r, scope, opt, true)
		defer func() {
			if l.w != nil {
				l.w.close(ctx)
			}
		}()
		if failed = l.run(ctx, next); failed != nil {
			return errRolledBack
		}
		return nil
	})
	if errors.Is(err, errRolledBack) {
		err = failed
	}
	if l == nil {
		return 0, err
	}
	return l.n, err
}

// errRolledBack ends a bulk load's transaction whose error InsertFrom returns as it is.
var errRolledBack = errors.New("engine: bulk load rolled back")

// bulkLoad is the state of one InsertFrom: the chunk at hand and what the checks keep across
// chunks.
type bulkLoad struct {
	s     *Store // the load's transaction; the store itself in a dry run
	r     *Resource
	org   string
	opt   BulkOptions
	check WriteCheck
	w     *bulkWriter // made for the first chunk written
	// write is true while the rows are written: not a dry run, and no problem, refusal or
	// undecoded row so far.
	write   bool
	refusal error // the write check's first refusal
	n       int   // rows read
	bulk    BulkError
	// sets are r's key (as a constraint that does not fold) and unique constraints; seen[i]
	// maps the hash of each tuple of sets[i] in the rows so far to its first row.
	sets []Unique
	seen []map[tupleHash]firstRow
	// empty is true when r's table held no row when the load began: no tuple of the load can
	// be stored before it, and checkSet asks the partition nothing.
	empty bool
	// written counts the rows written; analyzeAt is the count from which analyze runs next
	// (before the next chunk's checks).
	written, analyzeAt int
	// selfRef is true when a member of r refers to r itself.
	selfRef bool
	// later are the references to r itself that name no record of the partition nor a row
	// read so far: a later row may.
	later []laterRef
	// the chunk: rows' indexes, drafts and whether prepareNew took them
	rows   []int
	drafts []Draft
	ok     []bool
}

// tupleHash is a hash of a tuple's text (SHA-256, 128 bits: no two tuples of a file share one
// in practice, and a crafted file cannot make them).
type tupleHash [16]byte

// firstRow is the first row of a tuple, and whether the partition held the tuple before the load.
type firstRow struct {
	row    int32
	stored bool
}

// laterRef is a row's reference to r itself that is checked at the end of the load.
type laterRef struct {
	row   int
	field *Field
	value string
}

func (s *Store) newBulkLoad(ctx context.Context, r *Resource, scope Scope, opt BulkOptions, write bool) *bulkLoad {
	l := &bulkLoad{s: s, r: r, org: scope.orgFor(r), opt: opt, write: write, sets: append([]Unique{{Fields: r.Key}}, r.Unique...)}
	if write {
		l.check = writeCheck(ctx, r)
	}
	for range l.sets {
		l.seen = append(l.seen, map[tupleHash]firstRow{})
	}
	for _, f := range r.Fields {
		l.selfRef = l.selfRef || f.References == r
	}
	return l
}

// run reads, checks and (while it may) writes every row of next, a chunk at a time; the
// result is nil when every row was written, or every row was fit in a dry run. A cancelled
// ctx stops it once a chunk is read, before its checks and writes, and before the end (see
// stopped).
func (l *bulkLoad) run(ctx context.Context, next RowSource) error {
	var one []int
	if err := l.s.from(ctx, l.r).Select("1").Limit(1).Scan(&one).Error; err != nil {
		return fmt.Errorf("engine: check %s: %w", l.r.Name, translate(l.s, l.r, err))
	}
	l.empty = len(one) == 0
	for eof := false; !eof; {
		l.rows, l.drafts = l.rows[:0], l.drafts[:0]
		read := l.n
		for len(l.rows) < bulkChunk {
			d, err := next()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return err
			}
			if l.n == maxBulkRows {
				return fmt.Errorf("%w: more than %d rows", ErrInvalid, maxBulkRows)
			}
			if d.r == nil {
				l.bulk.Undecoded++
				l.write = false
			} else if err := d.of(l.r); err != nil {
				return fmt.Errorf("row %d: %w", l.n, err)
			} else {
				l.rows, l.drafts = append(l.rows, l.n), append(l.drafts, d)
			}
			l.n++
		}
		if err := l.stopped(ctx); err != nil {
			return err
		}
		if len(l.rows) > 0 {
			if err := l.chunk(ctx); err != nil {
				return err
			}
		}
		if l.opt.Progress != nil && l.n > read {
			l.opt.Progress(l.n)
		}
	}
	if err := l.stopped(ctx); err != nil { // cancelled during the last chunk
		return err
	}
	l.checkLaterRefs()
	switch {
	case l.bulk.Problems.Len() > 0 || l.bulk.Undecoded > 0:
		return &l.bulk
	case l.refusal != nil:
		return l.refusal
	}
	return nil
}

// stopped returns the cause of ctx's cancellation (the interrupted credo load), which rolls
// the load back. Its statements do not see the cancellation on PostgreSQL (see
// Store.Transaction): a load interrupted there ran on and committed every row; on SQLite the
// next statement failed with "sql: statement is closed".
func (l *bulkLoad) stopped(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("stopped after %d row(s), nothing written: %w", l.n, context.Cause(ctx))
}

// maxBulkRows bounds a load's rows, whose indexes firstRow keeps in 32 bits.
const maxBulkRows = 1<<31 - 1

// chunk prepares, checks and, while the load writes, write-checks and writes the chunk.
func (l *bulkLoad) chunk(ctx context.Context) error {
	problems := l.bulk.Problems.Len()
	l.ok = l.ok[:0]
	for i, d := range l.drafts {
		err := l.s.prepareNew(l.r, d, l.org, fileKey)
		if err != nil {
			l.bulk.Problems.AddError(l.rows[i], err)
		}
		l.ok = append(l.ok, err == nil)
	}
	if err := l.analyze(ctx); err != nil {
		return err
	}
	if err := l.checkChunk(ctx); err != nil {
		return err
	}
	if l.bulk.Problems.Len() > problems {
		l.write = false
	}
	if !l.write {
		return nil
	}
	if l.check != nil {
		for i, d := range l.drafts {
			if err := l.r.runCheck(ctx, l.check, l.s, nil, d.rec); err != nil {
				l.refusal, l.write = fmt.Errorf("row %d: %w", l.rows[i], err), false
				return nil
			}
		}
	}
	if l.w == nil {
		var err error
		if l.w, err = l.s.newBulkWriter(ctx, l.r); err != nil {
			return err
		}
	}
	recs := make([]Record, len(l.drafts))
	for i, d := range l.drafts {
		recs[i] = d.rec
	}
	if err := l.w.write(ctx, recs); err != nil {
		return err
	}
	l.written += len(recs)
	return nil
}

// analyze keeps PostgreSQL's statistics of r's table up with the rows the load writes, while
// its checks look rows up in it (a table not empty as the load began, or a reference to r
// itself): an ANALYZE in the load's transaction before the checks of its second chunk, and then
// of each chunk by which its rows written have doubled. The planner's estimate of a table
// follows its size on disk at the density of its last ANALYZE; a small table's (one record, or
// a few among the dead rows of a load rolled back) made it scan the rows of an organization for
// each batch of pairs, rows that every chunk grows: 100,000 widgets loaded into a table of one
// analyzed record took 130 s, against 4 s into an empty one. A rolled back load rolls its
// statistics back too. Nothing follows the last chunk to plan, so no ANALYZE does either: a load
// of one chunk (every ordinary import) analyzes nothing. (It did, after each chunk: ANALYZE
// conflicts with itself, so concurrent imports into one table waited for each other's commit;
// the table's statistics are autovacuum's again after the load.)
func (l *bulkLoad) analyze(ctx context.Context) error {
	if l.w == nil || l.w.pg == nil || l.written == 0 || l.written < l.analyzeAt || l.empty && !l.selfRef {
		return nil
	}
	l.analyzeAt = 2 * l.written
	if err := l.s.db.WithContext(l.s.detach(ctx)).Exec("ANALYZE " + l.s.Table(l.r)).Error; err != nil {
		return fmt.Errorf("engine: analyze %s: %w", l.r.Name, translate(l.s, l.r, err))
	}
	return nil
}

// bulkWriter writes a load's chunks into r's table on the load's transaction: with COPY on
// PostgreSQL, in multi-row INSERT statements prepared once otherwise.
type bulkWriter struct {
	s     *Store
	r     *Resource
	pg    *pgTx
	stmts map[int]*sql.Stmt
	args  []any
	reset func()
}

func (s *Store) newBulkWriter(ctx context.Context, r *Resource) (*bulkWriter, error) {
	w := &bulkWriter{s: s, r: r, stmts: map[int]*sql.Stmt{}}
	if t, ok := s.db.Statement.ConnPool.(*pgTx); ok {
		w.pg = t
		return w, nil
	}
	if s.dialect == SQLite {
		// The writer's page cache holds the indexes' pages that a load of rows in random key
		// order touches again and again; the connection's usual bound (sqliteCacheKiB) made
		// a load of 100,000 rows read and write the same pages ten times as long.
		pool := s.db.Statement.ConnPool
		if _, err := pool.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", sqliteBulkCacheKiB)); err != nil {
			return nil, translate(s, r, err)
		}
		w.reset = func() {
			pool.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA cache_size = -%d", sqliteCacheKiB))
		}
	}
	return w, nil
}

func (w *bulkWriter) close(context.Context) {
	for _, st := range w.stmts {
		st.Close()
	}
	if w.reset != nil {
		w.reset()
	}
}

func (w *bulkWriter) write(ctx context.Context, rows []Record) error {
	if w.pg != nil {
		return w.s.copyRows(ctx, w.pg, w.r, rows)
	}
	return w.insertRows(ctx, rows)
}

// copyRows writes rows into r's table with PostgreSQL's COPY, on the connection of the
// transaction t. COPY has no ON CONFLICT: a key that another writer stored since the
// checks fails the whole COPY as a unique violation, and the transaction with it. Like the
// engine's statements it does not see the caller's cancellation (see detach); its deadline
// grows with the rows: the store's timeout per 10,000 rows begun.
func (s *Store) copyRows(ctx context.Context, t *pgTx, r *Resource, rows []Record) error {
	cols := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		cols[i] = f.Column
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout*time.Duration(1+len(rows)/10000))
	defer cancel()
	src := &copySource{r: r, rows: rows, i: -1}
	pg := backend.LinkedPostgres()
	return t.conn.Raw(func(dc any) error {
		n, err := pg.CopyFrom(ctx, dc, s.schema, r.Table, cols, src)
		if err != nil {
			return translate(s, r, err)
		}
		if n < int64(len(rows)) {
			return conflict(r, r.Key)
		}
		return nil
	})
}

// copySource hands COPY the rows' stored values: uuids as their 16 bytes (COPY's binary
// format takes no text for them), datetimes as their stored text.
type copySource struct {
	r    *Resource
	rows []Record
	i    int
	vals []any
	err  error
}

func (c *copySource) Next() bool {
	c.i++
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
				return nil, fmt.Errorf("%w: %s %s is not a uuid", ErrInvalid, f.Name, Quoted(str))
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
// per load on its transaction. A record whose key is taken inserts nothing (see
// onKeyConflict) and fails the load as a conflict.
func (w *bulkWriter) insertRows(ctx context.Context, rows []Record) error {
	r := w.r
	per := max(1, min(len(rows), bulkVars/len(r.Fields)))
	pool := w.s.db.Statement.ConnPool
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		st := w.stmts[end-start]
		if st == nil {
			var err error
			if st, err = pool.PrepareContext(ctx, w.s.insertRowsSQL(r, end-start)); err != nil {
				return translate(w.s, r, err)
			}
			w.stmts[end-start] = st
		}
		w.args = w.args[:0]
		for _, rec := range rows[start:end] {
			for _, f := range r.Fields {
				w.args = append(w.args, storageValue(rec[f.Index]))
			}
		}
		res, err := st.ExecContext(ctx, w.args...)
		if err != nil {
			return translate(w.s, r, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return translate(w.s, r, err)
		} else if n < int64(end-start) {
			return conflict(r, r.Key) // a stored record has the key of one of these
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
