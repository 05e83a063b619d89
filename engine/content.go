package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Content is a byte stream that belongs to one record of a resource with a content table
// (Descriptor.Content): a file every process sharing the database can serve. It is stored in
// the partition's database as rows of (record key, seq, data, written), every chunk but the
// last ChunkSize bytes long, so that writing and reading it hold one chunk in memory whatever
// its size, and no statement holds a connection while the client is slow.
//
// A chunk table was chosen over PostgreSQL large objects: it works the same on SQLite, its
// rows live in the partition's schema (large objects are per database, outside the
// partition), and they go with a plain DELETE (large objects need lo_unlink, or are
// orphaned). PostgreSQL compresses and TOASTs each bytea chunk out of line.

// ChunkSize is the length of every chunk but a stream's last: a 50 MB export is 200 rows,
// and a writer or reader holds one chunk at a time.
const ChunkSize = 256 << 10

// ContentWriteLimit is the longest InsertWithContent may take from its first chunk to its
// record: a slower write fails rather than record a stream PurgeContent may have begun to
// remove.
const ContentWriteLimit = 30 * time.Minute

// ContentOrphanAge is the age after which PurgeContent removes chunks that no record owns (a
// write that failed or whose process died). Twice ContentWriteLimit: it never takes the
// chunks of a write that can still be recorded, even between processes whose clocks differ
// by minutes.
const ContentOrphanAge = 2 * ContentWriteLimit

// The columns of a content table besides the record's key columns.
const (
	seqColumn     = "seq"
	dataColumn    = "data"
	writtenColumn = "written"
)

var contentColumns = map[string]bool{seqColumn: true, dataColumn: true, writtenColumn: true}

// contentWriters returns the slots of a pool of maxConns connections for InsertWithContent:
// half of them. A content write usually holds two connections at once, one streaming what
// fill reads and one inserting chunks; were every connection streaming, no chunk could be
// written and every writer would wait for ever. With half the pool at most streaming for
// writers, the other half always serves their chunks (and every other request) in turn.
func contentWriters(maxConns int) chan struct{} {
	return make(chan struct{}, max(1, maxConns/2))
}

// contentDDL returns the statements that create a resource's content table, idempotently.
func (s *Store) contentDDL(r *Resource) []ddlStatement {
	blob, integer := "BLOB", "INTEGER"
	if s.dialect == Postgres {
		blob, integer = "bytea", "bigint"
	}
	var cols, keys []string
	for _, k := range r.Key {
		cols = append(cols, quote(k.Column)+" "+s.columnType(k)+" NOT NULL")
		keys = append(keys, quote(k.Column))
	}
	cols = append(cols, quote(seqColumn)+" integer NOT NULL", quote(dataColumn)+" "+blob+" NOT NULL",
		quote(writtenColumn)+" "+integer+" NOT NULL",
		"PRIMARY KEY ("+strings.Join(append(keys, quote(seqColumn)), ", ")+")")
	table := s.qualify(r.Content)
	index := identifier("ix_" + r.Content + "_" + writtenColumn)
	stmt, conc := indexDDL(false, index, table, []string{quote(writtenColumn)}, "")
	stmts := []ddlStatement{
		{sql: fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n  %s\n)", table, strings.Join(cols, ",\n  ")), table: r.Content},
		{sql: stmt, concurrently: conc, on: r.Content, index: index},
	}
	if s.dialect == Postgres {
		stmts = append(stmts, ddlStatement{sql: lz4DDL(table), on: r.Content, compress: true})
	}
	return stmts
}

// lz4DDL compresses a content table's chunks with lz4 rather than PostgreSQL's default pglz,
// when the server has it (PostgreSQL 14 and later, built with lz4, as the Debian and official
// images are); otherwise the column keeps pglz. Measured on a 34 MB CSV export in 256 KiB
// chunks: pglz spent 1.3–2.2 s compressing, lz4 0.7 s (0.3 s with the asynchronous commits of
// insertChunk) for the same stored size (16 MB). The column is altered only while it is not
// lz4 already, so that a restart takes no lock on a table other replicas are serving.
func lz4DDL(table string) string {
	return fmt.Sprintf(`DO $$
BEGIN
  IF (SELECT attcompression FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s) IS DISTINCT FROM 'l' THEN
    EXECUTE %s;
  END IF;
EXCEPTION WHEN feature_not_supported OR undefined_column OR syntax_error THEN
  NULL; -- no lz4 in this server: pglz stays
END $$`, sqlString(table), sqlString(dataColumn),
		sqlString("ALTER TABLE "+table+" ALTER COLUMN "+quote(dataColumn)+" SET COMPRESSION lz4"))
}

// sqlString renders s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// contentKey renders the WHERE condition on a record's key in its content table (columns
// qualified by table when given) and its bind values.
func contentKey(r *Resource, table string, key []any) (string, []any) {
	conds := make([]string, len(r.Key))
	args := make([]any, len(r.Key))
	for i, k := range r.Key {
		c := quote(k.Column)
		if table != "" {
			c = table + "." + c
		}
		conds[i] = c + " = ?"
		args[i] = storageValue(key[i])
	}
	return strings.Join(conds, " AND "), args
}

func needContent(r *Resource) error {
	if r.Content == "" {
		return fmt.Errorf("engine: %s has no content table", r.Name)
	}
	return nil
}

// InsertWithContent stores a new record of r with key whose content is what fill writes. The
// chunks are written first, each in a statement of its own (a long write holds no
// transaction, which on SQLite would block every other writer); then record builds the
// record's draft, knowing the content's length (an error there fails the insert), and it is
// created (as Create does within every organization: this is the process's own bookkeeping) in a transaction that checks that every chunk is
// there. So the record, and with it the content, is visible only once complete. When anything
// fails the chunks written are removed (or, should that fail too, by PurgeContent later). A
// record whose key is not key is refused. At most half the pool's connections write content
// at once (see contentWriters); other writers wait their turn, as long as ctx lets them.
func (s *Store) InsertWithContent(ctx context.Context, r *Resource, key []any, fill func(w io.Writer) error,
	record func(size int64) (Draft, error)) (_ Record, err error) {
	defer wrap(&err, "create", r.Name, key)
	if err := needContent(r); err != nil {
		return nil, err
	}
	if len(key) != len(r.Key) {
		return nil, fmt.Errorf("key %v has %d values, want %d", key, len(key), len(r.Key))
	}
	if s.writers != nil {
		select {
		case s.writers <- struct{}{}:
			defer func() { <-s.writers }()
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a content writer: %w", ctx.Err())
		}
	}
	w := &contentWriter{s: s, ctx: ctx, r: r, key: key, started: time.Now()}
	rec, err := s.insertWithContent(ctx, r, w, fill, record)
	// Chunk 0 written means the key had no content before: every chunk of the key is this
	// write's. Before that, the key may be another record's, whose content must stay.
	if err != nil && w.seq > 0 {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = s.dropContent(dctx, r, key)
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}

func (s *Store) insertWithContent(ctx context.Context, r *Resource, w *contentWriter, fill func(w io.Writer) error,
	record func(size int64) (Draft, error)) (Record, error) {
	if err := fill(w); err != nil {
		return nil, err
	}
	if len(w.buf) > 0 || w.seq == 0 {
		if err := w.flush(); err != nil { // the last chunk; an empty stream is one empty chunk
			return nil, err
		}
	}
	d, err := record(w.n)
	if err == nil {
		err = d.of(r)
	}
	if err != nil {
		return nil, err
	}
	rec := d.rec
	if err := s.prepareNew(r, d, "", fileKey); err != nil {
		return nil, err
	}
	for i, k := range keyOf(r, rec) {
		if fmt.Sprint(k) != fmt.Sprint(w.key[i]) {
			return nil, fmt.Errorf("record key %v is not the content's %v", keyOf(r, rec), w.key)
		}
	}
	err = s.Transaction(ctx, func(tx *Store) error {
		if age := time.Since(w.started); age > ContentWriteLimit {
			return fmt.Errorf("content took %v, more than %v", age.Round(time.Second), ContentWriteLimit)
		}
		cond, args := contentKey(r, "", w.key)
		var n int64
		if err := tx.db.WithContext(ctx).Raw("SELECT count(*) FROM "+tx.qualify(r.Content)+" WHERE "+cond, args...).Scan(&n).Error; err != nil {
			return fmt.Errorf("count chunks: %w", translate(s, r, err))
		}
		if n != int64(w.seq) {
			return fmt.Errorf("%d of %d chunks stored", n, w.seq)
		}
		if err := tx.insertRow(ctx, r, rec); err != nil {
			return translate(s, r, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// contentWriter gathers a stream into chunks and inserts each one full.
type contentWriter struct {
	s       *Store
	ctx     context.Context
	r       *Resource
	key     []any
	started time.Time
	buf     []byte
	seq     int
	n       int64
}

func (w *contentWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if cap(w.buf) == 0 {
			w.buf = make([]byte, 0, ChunkSize)
		}
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+k]
		p, written = p[k:], written+k
		if len(w.buf) == ChunkSize {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flush inserts the gathered bytes as the next chunk.
func (w *contentWriter) flush() error {
	cols := make([]string, 0, len(w.r.Key)+3)
	args := make([]any, 0, len(w.r.Key)+3)
	for i, k := range w.r.Key {
		cols = append(cols, quote(k.Column))
		args = append(args, storageValue(w.key[i]))
	}
	cols = append(cols, quote(seqColumn), quote(dataColumn), quote(writtenColumn))
	data := w.buf
	if data == nil {
		data = []byte{} // NOT NULL: an empty stream's chunk is empty, not null
	}
	args = append(args, w.seq, data, w.started.Unix())
	sql := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", w.s.qualify(w.r.Content), strings.Join(cols, ", "),
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
	if err := w.s.insertChunk(w.ctx, sql, args); err != nil {
		return fmt.Errorf("engine: write %s content: chunk %d: %w", w.r.Name, w.seq, translate(w.s, w.r, err))
	}
	w.n += int64(len(w.buf))
	w.seq++
	w.buf = w.buf[:0]
	return nil
}

// insertChunk runs a chunk's INSERT. On PostgreSQL its transaction commits asynchronously
// (synchronous_commit off: no wait for the WAL flush): a chunk is of use only once the record
// that owns it commits, synchronously, in insertWithContent, and that commit's WAL flush
// covers every earlier record of the WAL, the chunks included. A crash before it loses chunks
// that no record owns, which PurgeContent removes anyway.
func (s *Store) insertChunk(ctx context.Context, sql string, args []any) error {
	if s.dialect != Postgres {
		return s.db.WithContext(ctx).Exec(sql, args...).Error
	}
	return s.transaction(ctx, func(tx *Store) error {
		if err := tx.db.Exec("SET LOCAL synchronous_commit = off").Error; err != nil {
			return err
		}
		return tx.db.Exec(sql, args...).Error
	})
}

// dropContent removes a record's chunks.
func (s *Store) dropContent(ctx context.Context, r *Resource, key []any) error {
	cond, args := contentKey(r, "", key)
	if err := s.db.WithContext(ctx).Exec("DELETE FROM "+s.qualify(r.Content)+" WHERE "+cond, args...).Error; err != nil {
		return fmt.Errorf("content: %w", translate(s, r, err))
	}
	return nil
}

// dropContentMatching removes the content of the records of r that q matches.
func (s *Store) dropContentMatching(ctx context.Context, r *Resource, q Query) error {
	cols := make([]string, len(r.Key))
	for i, k := range r.Key {
		cols[i] = quote(k.Column)
	}
	keys := s.where(s.from(ctx, r), r, q).Select(alias + "." + strings.Join(cols, ", "+alias+"."))
	sql := fmt.Sprintf("DELETE FROM %s WHERE (%s) IN (?)", s.qualify(r.Content), strings.Join(cols, ", "))
	if err := s.db.WithContext(ctx).Exec(sql, keys).Error; err != nil {
		return fmt.Errorf("content: %w", translate(s, r, err))
	}
	return nil
}

// PurgeContent removes the chunks that no record of r owns and that were written before
// now - ContentOrphanAge, in one statement (processes may run it concurrently: a chunk
// removed twice is removed once), and returns how many it removed.
func (s *Store) PurgeContent(ctx context.Context, r *Resource, now time.Time) (int64, error) {
	if err := needContent(r); err != nil {
		return 0, err
	}
	chunks := s.qualify(r.Content)
	owned := make([]string, len(r.Key))
	for i, k := range r.Key {
		owned[i] = alias + "." + quote(k.Column) + " = " + chunks + "." + quote(k.Column)
	}
	sql := fmt.Sprintf("DELETE FROM %s WHERE %s < ? AND NOT EXISTS (SELECT 1 FROM %s AS %s WHERE %s)",
		chunks, quote(writtenColumn), s.Table(r), alias, strings.Join(owned, " AND "))
	tx := s.db.WithContext(ctx).Exec(sql, now.Add(-ContentOrphanAge).Unix())
	if tx.Error != nil {
		return 0, fmt.Errorf("engine: purge %s content: %w", r.Name, translate(s, r, tx.Error))
	}
	return tx.RowsAffected, nil
}

// ContentReader reads a record's content chunk by chunk, each with a statement of its own. It
// is an io.ReadSeeker (http.ServeContent answers ranges with it); it is not safe for
// concurrent use. A chunk that disappears while reading (the record was deleted) is an
// ErrNotFound error.
type ContentReader struct {
	s     *Store
	ctx   context.Context
	r     *Resource
	key   []any
	size  int64
	chunk int64 // the length of every chunk but the last
	off   int64
	cur   []byte // the chunk seq; nil for none
	buf   []byte // cur's storage, kept between chunks
	seq   int64  // the chunk in cur; -1 for none
}

var _ io.ReadSeeker = (*ContentReader)(nil)

// OpenContent returns a reader of the content of r's record with key; reads use ctx. It does
// not check that the record exists: callers look the record up first, since the record is
// what makes its content visible. A record without content (every stream, even an empty
// one, has a chunk) is an ErrNotFound.
func (s *Store) OpenContent(ctx context.Context, r *Resource, key []any) (*ContentReader, error) {
	if err := needContent(r); err != nil {
		return nil, err
	}
	cond, args := contentKey(r, "", key)
	// The chunk length is read from chunk 0 rather than assumed to be ChunkSize, so that a
	// stream written by a process built with another ChunkSize still reads back.
	row := s.db.WithContext(ctx).Raw(fmt.Sprintf("SELECT count(*), coalesce(sum(length(%[1]s)), 0), "+
		"coalesce(max(CASE WHEN %[2]s = 0 THEN length(%[1]s) END), 0) FROM %[3]s WHERE %[4]s",
		quote(dataColumn), quote(seqColumn), s.qualify(r.Content), cond), args...).Row()
	var n, size, first int64
	if err := row.Scan(&n, &size, &first); err != nil {
		return nil, fmt.Errorf("engine: open %s %v content: %w", r.Name, key, translate(s, r, err))
	}
	if n == 0 {
		return nil, fmt.Errorf("engine: open %s %v content: %w", r.Name, key, ErrNotFound)
	}
	if n > 1 && first <= 0 {
		return nil, fmt.Errorf("engine: open %s %v content: chunk 0 is empty", r.Name, key)
	}
	return &ContentReader{s: s, ctx: ctx, r: r, key: key, size: size, chunk: max(first, 1), seq: -1}, nil
}

// Size returns the content's length in bytes.
func (c *ContentReader) Size() int64 { return c.size }

// Read reads from the current offset, loading the chunk that holds it when needed.
func (c *ContentReader) Read(p []byte) (int, error) {
	if c.off >= c.size {
		return 0, io.EOF
	}
	seq := c.off / c.chunk
	if seq != c.seq {
		if err := c.load(seq); err != nil {
			return 0, err
		}
	}
	at := c.off - seq*c.chunk
	if at >= int64(len(c.cur)) {
		return 0, fmt.Errorf("engine: read %s %v content: chunk %d is shorter than expected", c.r.Name, c.key, seq)
	}
	n := copy(p, c.cur[at:])
	c.off += int64(n)
	return n, nil
}

func (c *ContentReader) load(seq int64) error {
	c.cur, c.seq = nil, -1
	cond, args := contentKey(c.r, "", c.key)
	rows, err := c.s.db.WithContext(c.ctx).Raw("SELECT "+quote(dataColumn)+" FROM "+c.s.qualify(c.r.Content)+
		" WHERE "+cond+" AND "+quote(seqColumn)+" = ?", append(args, seq)...).Rows()
	if err != nil {
		return fmt.Errorf("engine: read %s %v content: %w", c.r.Name, c.key, translate(c.s, c.r, err))
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return fmt.Errorf("engine: read %s %v content: %w", c.r.Name, c.key, translate(c.s, c.r, err))
		}
		return fmt.Errorf("engine: read %s %v content: chunk %d: %w", c.r.Name, c.key, seq, ErrNotFound)
	}
	// The driver's bytes are copied into the reader's own buffer, reused from chunk to chunk.
	var raw sql.RawBytes
	if err := rows.Scan(&raw); err != nil {
		return fmt.Errorf("engine: read %s %v content: %w", c.r.Name, c.key, err)
	}
	c.cur, c.seq = append(c.buf[:0], raw...), seq
	c.buf = c.cur
	return nil
}

// Seek sets the offset for the next Read, as io.Seeker says.
func (c *ContentReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += c.off
	case io.SeekEnd:
		offset += c.size
	default:
		return 0, errors.New("engine: content seek: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("engine: content seek: negative offset")
	}
	c.off = offset
	return offset, nil
}
