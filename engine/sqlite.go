package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/migrator"
	"gorm.io/gorm/schema"

	"credo/engine/backend"
)

// SQLite. Each partition's file is served by two database/sql pools of the modernc driver
// (pure Go, no cgo; the same driver and release line as the reference server bench/ref;
// linked by credo/engine/sqlite): a
// read pool of Limits.MaxConns connections, opened query_only, and one writer connection
// that runs every other statement and every transaction. SQLite lets one writer at a time
// into a file anyway; with one connection the writers queue in the process, in order,
// instead of polling the file's lock (busy_timeout) and losing the race to newcomers. Every
// statement that runs outside a transaction is prepared once per connection and kept (see
// stmtCache): modernc compiles a statement from its text on each unprepared call, a third
// of a key lookup's time.
//
// The driver was chosen by measurement (2-core machine, 100,000 rows, prepared statements):
// modernc.org/sqlite v1.62 looked a key up in 17 µs, inserted 100,000 rows in 100-row
// statements in 0.28 s and autocommitted an insert in 38 µs; github.com/glebarez/go-sqlite
// v1.23 (a fork of modernc's driver, on modernc v1.55, what the GORM dialector
// github.com/glebarez/sqlite pulls in) took 27 µs, 0.73 s and 112 µs, its prepared
// statements no faster than unprepared ones and its binding quadratic in the number of
// values; github.com/ncruces/go-sqlite3 v0.37 (SQLite compiled to wasm) was close to modernc
// (20 µs, 0.23 s, 59 µs) but its GORM dialector is not served here. modernc is the upstream
// of both forks and releases monthly. Its only cost is a dialector of our own (below): the
// glebarez dialector imports its fork, which registers the same driver name.

// sqliteMaxStmts bounds each pool's statement cache; when full it is emptied and refills
// with the statements in use. The plans are at most maxPlans, and the hot ones few.
const sqliteMaxStmts = 512

// sqliteCacheKiB bounds each connection's page cache (PRAGMA cache_size, in KiB): the
// resident memory of a partition stays under (MaxConns+1) times this, however large its file.
const sqliteCacheKiB = 2048

// sqliteBulkCacheKiB is the writer's page cache during a bulk load (see insertRows), given
// back when it ends.
const sqliteBulkCacheKiB = 64 << 10

// sqliteDSN returns the data source name of a partition's file for the pool's connections.
// Times are written as SQLite's format 7 (what the previous driver wrote), transactions take
// the write lock at BEGIN (BEGIN IMMEDIATE: a read-merge-write's read is already under it).
func sqliteDSN(path string, timeout time.Duration, readOnly bool) string {
	dsn := path + fmt.Sprintf("?_pragma=busy_timeout(%d)", timeout.Milliseconds()) +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
		fmt.Sprintf("&_pragma=cache_size(-%d)", sqliteCacheKiB) + "&_time_format=sqlite&_txlock=immediate"
	if readOnly {
		dsn += "&_pragma=query_only(1)"
	}
	return dsn
}

// sqlitePool is GORM's connection pool on one SQLite file: reads on the read pool, every
// other statement and every transaction on the single writer connection.
type sqlitePool struct {
	read, write   *stmtCache
	readDB, wDB   *sql.DB
	slot          chan struct{} // the writer's turn: held by a statement or a transaction
	timeout       time.Duration
	writeWaits    int64
	writeWaitTime time.Duration
	mu            sync.Mutex // guards the wait counters
}

var (
	_ gorm.ConnPool         = (*sqlitePool)(nil)
	_ gorm.ConnPoolBeginner = (*sqlitePool)(nil)
	_ gorm.GetDBConnector   = (*sqlitePool)(nil)
	_ gorm.ConnPool         = (*sqliteTx)(nil)
	_ gorm.TxCommitter      = (*sqliteTx)(nil)
)

// openSQLitePool opens the read pool (readers connections) and the writer of the file at path.
func openSQLitePool(path string, readers int, timeout time.Duration) (*sqlitePool, error) {
	rdb, err := sql.Open(backend.LinkedSQLite().Driver(), sqliteDSN(path, timeout, true))
	if err != nil {
		return nil, err
	}
	wdb, err := sql.Open(backend.LinkedSQLite().Driver(), sqliteDSN(path, timeout, false))
	if err != nil {
		rdb.Close()
		return nil, err
	}
	rdb.SetMaxOpenConns(readers)
	rdb.SetMaxIdleConns(readers)
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	return &sqlitePool{read: &stmtCache{db: rdb}, write: &stmtCache{db: wdb}, readDB: rdb, wDB: wdb,
		slot: make(chan struct{}, 1), timeout: timeout}, nil
}

// Close closes both pools.
func (p *sqlitePool) Close() error {
	p.read.close()
	p.write.close()
	err := p.readDB.Close()
	if werr := p.wDB.Close(); err == nil {
		err = werr
	}
	return err
}

// GetDBConn gives GORM's DB() the read pool.
func (p *sqlitePool) GetDBConn() (*sql.DB, error) { return p.readDB, nil }

// reads reports whether a statement only reads, and so may run on the read pool.
func reads(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// acquire waits for the writer's turn, at most for the store's timeout (the wait that
// busy_timeout bounded when every connection could write): a writer still waiting then is
// ErrUnavailable, saying that another writer held the database (writerBusy), like a PostgreSQL
// statement past its lock_timeout.
func (p *sqlitePool) acquire(ctx context.Context) error {
	select {
	case p.slot <- struct{}{}:
		return nil
	default:
	}
	start := time.Now()
	t := time.NewTimer(p.timeout)
	defer t.Stop()
	defer func() {
		p.mu.Lock()
		p.writeWaits++
		p.writeWaitTime += time.Since(start)
		p.mu.Unlock()
	}()
	select {
	case p.slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return writerBusy(p.timeout)
	}
}

func (p *sqlitePool) release() { <-p.slot }

// PrepareContext prepares on the pool the statement runs on.
func (p *sqlitePool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if reads(query) {
		return p.readDB.PrepareContext(ctx, query)
	}
	return p.wDB.PrepareContext(ctx, query)
}

func (p *sqlitePool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.release()
	return p.write.exec(ctx, query, args)
}

// QueryContext runs a read on the read pool. A statement that writes and returns rows (an
// INSERT … RETURNING) runs on the writer in its turn; its rows keep the connection until
// closed, so the next writer may wait for them in database/sql beyond its turn.
func (p *sqlitePool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if reads(query) {
		return p.read.query(ctx, query, args)
	}
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	defer p.release()
	return p.write.query(ctx, query, args)
}

func (p *sqlitePool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if reads(query) {
		return p.read.queryRow(ctx, query, args)
	}
	if err := p.acquire(ctx); err != nil {
		// A *sql.Row cannot carry an error of ours: one of an expired context reports
		// context.DeadlineExceeded, which is ErrUnavailable too.
		expired, cancel := context.WithDeadline(ctx, time.Time{})
		defer cancel()
		return p.wDB.QueryRowContext(expired, query, args...)
	}
	defer p.release()
	return p.write.queryRow(ctx, query, args)
}

// BeginTx begins a transaction on the writer, in its turn, which it holds until it ends.
func (p *sqlitePool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	tx, err := p.wDB.BeginTx(ctx, opts)
	if err != nil {
		p.release()
		return nil, err
	}
	return &sqliteTx{Tx: tx, pool: p, ctx: ctx}, nil
}

// stats returns the pools' counters as one pool: the readers and the writer.
func (p *sqlitePool) stats(name string) PoolStats {
	r, w := p.readDB.Stats(), p.wDB.Stats()
	p.mu.Lock()
	waits, waitTime := p.writeWaits, p.writeWaitTime
	p.mu.Unlock()
	return PoolStats{Pool: name, Max: r.MaxOpenConnections + w.MaxOpenConnections, InUse: r.InUse + w.InUse,
		Idle: r.Idle + w.Idle, Waits: r.WaitCount + waits, WaitTime: r.WaitDuration + waitTime}
}

// sqliteTx is a transaction on the writer. It runs the writer's cached statements on its
// connection. A statement not cached yet runs unprepared: preparing it on the writer's pool
// would wait for the connection the transaction holds. It is prepared when the transaction
// ends, before the writer's turn passes on, so that the next transaction finds it.
type sqliteTx struct {
	*sql.Tx
	pool   *sqlitePool
	ctx    context.Context
	once   sync.Once
	missed map[string]bool
}

func (t *sqliteTx) end(err error) error {
	t.once.Do(func() {
		defer t.pool.release()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), t.pool.timeout)
		defer cancel()
		for q := range t.missed {
			if _, perr := t.pool.write.stmt(ctx, q); perr != nil {
				break
			}
		}
	})
	return err
}

func (t *sqliteTx) Commit() error   { return t.end(t.Tx.Commit()) }
func (t *sqliteTx) Rollback() error { return t.end(t.Tx.Rollback()) }

// cached returns the transaction's statement for query, or nil (noted as missed).
func (t *sqliteTx) cached(ctx context.Context, query string) *sql.Stmt {
	if st := t.pool.write.lookup(query); st != nil {
		return t.Tx.StmtContext(ctx, st)
	}
	if t.missed == nil {
		t.missed = map[string]bool{}
	}
	if len(t.missed) < sqliteMaxStmts {
		t.missed[query] = true
	}
	return nil
}

func (t *sqliteTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st := t.cached(ctx, query)
	if st == nil {
		return t.Tx.ExecContext(ctx, query, args...)
	}
	defer st.Close()
	return st.ExecContext(ctx, args...)
}

// QueryContext and QueryRowContext leave the transaction's statement open: the transaction
// closes it when it ends, after its rows.
func (t *sqliteTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.cached(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t *sqliteTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.cached(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// stmtCache keeps a pool's prepared statements by their text; database/sql prepares each on
// every connection it runs on, once.
type stmtCache struct {
	db    *sql.DB
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// lookup returns the cached statement of query, or nil.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.stmts[query]
}

// stmt returns the cached statement of query, preparing it on first use.
func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.lookup(query); st != nil {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.stmts[query]; old != nil {
		st.Close()
		return old, nil
	}
	if c.stmts == nil || len(c.stmts) >= sqliteMaxStmts {
		for _, old := range c.stmts {
			old.Close() // database/sql closes it once its rows in flight are closed
		}
		c.stmts = make(map[string]*sql.Stmt)
	}
	c.stmts[query] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
}

// stmtClosed reports whether err is a cached statement closed by an eviction between its
// lookup and its use: the statement then runs unprepared.
func stmtClosed(err error) bool { return err != nil && err.Error() == "sql: statement is closed" }

func (c *stmtCache) exec(ctx context.Context, query string, args []any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(ctx, args...)
	if stmtClosed(err) {
		return c.db.ExecContext(ctx, query, args...)
	}
	return res, err
}

func (c *stmtCache) query(ctx context.Context, query string, args []any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if stmtClosed(err) {
		return c.db.QueryContext(ctx, query, args...)
	}
	return rows, err
}

func (c *stmtCache) queryRow(ctx context.Context, query string, args []any) *sql.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return c.db.QueryRowContext(ctx, query, args...) // reports the same error on Scan
	}
	// A statement closed by an eviction fails this row's Scan; evictions are rare.
	return st.QueryRowContext(ctx, args...)
}

// sqliteDialector is GORM's dialect of SQLite over an sqlitePool: quoting with backticks,
// ? placeholders, RETURNING, LIMIT -1 for an offset alone, no row locks.
type sqliteDialector struct{ pool *sqlitePool }

func (sqliteDialector) Name() string { return "sqlite" }

func (d sqliteDialector) Initialize(db *gorm.DB) error {
	db.ConnPool = d.pool
	callbacks.RegisterDefaultCallbacks(db, &callbacks.Config{
		CreateClauses:        []string{"INSERT", "VALUES", "ON CONFLICT", "RETURNING"},
		UpdateClauses:        []string{"UPDATE", "SET", "FROM", "WHERE", "RETURNING"},
		DeleteClauses:        []string{"DELETE", "FROM", "WHERE", "RETURNING"},
		LastInsertIDReversed: true,
	})
	db.ClauseBuilders["LIMIT"] = func(c clause.Clause, b clause.Builder) {
		l, ok := c.Expression.(clause.Limit)
		if !ok {
			c.Build(b)
			return
		}
		n := -1
		if l.Limit != nil && *l.Limit >= 0 {
			n = *l.Limit
		}
		if n >= 0 || l.Offset > 0 {
			b.WriteString("LIMIT " + strconv.Itoa(n))
		}
		if l.Offset > 0 {
			b.WriteString(" OFFSET " + strconv.Itoa(l.Offset))
		}
	}
	db.ClauseBuilders["FOR"] = func(c clause.Clause, b clause.Builder) {
		if _, ok := c.Expression.(clause.Locking); !ok {
			c.Build(b)
		}
	}
	return nil
}

func (sqliteDialector) DefaultValueOf(f *schema.Field) clause.Expression {
	if f.AutoIncrement {
		return clause.Expr{SQL: "NULL"}
	}
	return clause.Expr{SQL: "DEFAULT"}
}

func (d sqliteDialector) Migrator(db *gorm.DB) gorm.Migrator {
	return migrator.Migrator{Config: migrator.Config{DB: db, Dialector: d, CreateIndexAfterCreateTable: true}}
}

func (sqliteDialector) BindVarTo(w clause.Writer, _ *gorm.Statement, _ any) { w.WriteByte('?') }

// QuoteTo quotes each dot-separated part of an identifier with backticks.
func (sqliteDialector) QuoteTo(w clause.Writer, s string) {
	for i, part := range strings.Split(s, ".") {
		if i > 0 {
			w.WriteByte('.')
		}
		part = strings.Trim(part, "`")
		w.WriteByte('`')
		w.WriteString(strings.ReplaceAll(part, "`", "``"))
		w.WriteByte('`')
	}
}

func (sqliteDialector) Explain(sql string, vars ...any) string {
	return logger.ExplainSQL(sql, nil, `"`, vars...)
}

func (sqliteDialector) DataTypeOf(f *schema.Field) string {
	switch f.DataType {
	case schema.Bool:
		return "numeric"
	case schema.Int, schema.Uint:
		if f.AutoIncrement {
			return "integer PRIMARY KEY AUTOINCREMENT"
		}
		return "integer"
	case schema.Float:
		return "real"
	case schema.String:
		return "text"
	case schema.Time:
		if t, ok := f.TagSettings["TYPE"]; ok {
			return t
		}
		return "datetime"
	case schema.Bytes:
		return "blob"
	}
	return string(f.DataType)
}

func (sqliteDialector) SavePoint(tx *gorm.DB, name string) error {
	return tx.Exec("SAVEPOINT " + name).Error
}

func (sqliteDialector) RollbackTo(tx *gorm.DB, name string) error {
	return tx.Exec("ROLLBACK TO SAVEPOINT " + name).Error
}
