package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	"credo/engine/backend"
)

// Migrate creates the partition's schema, tables and indexes, and adds columns that
// descriptors gained since the tables were created. On SQLite it runs in one transaction, all
// or nothing: a unique index that the records would break is a *DuplicatesError naming them,
// and leaves the partition as it was; a partition that lacks nothing is not migrated (see
// upToDate). On PostgreSQL the transaction creates the tables, their indexes and the columns,
// taking every table lock it needs before its first change (see migrateLocked); once it has
// committed, the indexes that tables which existed before it lack are built concurrently,
// one by one, without stopping the writes of the processes serving them (see buildIndexes). A
// session's advisory lock, on a connection of the migration's own, covers both, so that
// processes starting together do not race (see onMigrationConn).
func (s *Store) Migrate(ctx context.Context) (err error) {
	defer wrap(&err, "migrate", s.Partition, nil)
	if s.dialect != Postgres {
		if done, err := s.upToDate(ctx); err != nil || done {
			return err
		}
		return s.transaction(ctx, func(tx *Store) error {
			plan, err := tx.plan(ctx)
			if err != nil {
				return err
			}
			return tx.run(ctx, plan)
		})
	}
	// A cancelled start-up (SIGTERM) stops in PostgreSQL what the migration runs there: an
	// index build left running after the process exited kept its snapshot and the partition's
	// lock, and the next replica of a rolling deploy waited for them (see buildFailed).
	ctx = backend.CancelInServer(ctx)
	err = s.onMigrationConn(ctx, func(c *Store) error {
		if err := c.refuseDuplicatesFirst(ctx); err != nil {
			return err
		}
		if err := c.migrateLocked(ctx); err != nil {
			return err
		}
		return c.buildIndexes(ctx)
	})
	return leftRunning(ctx, s.Partition, err)
}

// ErrLeftRunning is a start-up that was interrupted while PostgreSQL ran a statement of its
// migration, and whose cancel PostgreSQL did not confirm within backend.ServerCancelGrace: the
// statement may still run there, holding what it holds, until it ends or its connection's loss
// is noticed.
var ErrLeftRunning = errors.New("PostgreSQL did not confirm that it stopped the statement")

// leftRunning returns err, the end of an interrupted migration of partition, wrapping
// ErrLeftRunning when the driver saw a cancel of any of its statements go unconfirmed
// (backend.CancelUnconfirmed): a step of the migration's transaction, the check before it or
// the lock's query as well as a build (whose own error says so already, see interrupted).
// Every one of them may still run in PostgreSQL, and start-up reports each the same way.
func leftRunning(ctx context.Context, partition string, err error) error {
	if err == nil || ctx.Err() == nil || !backend.CancelUnconfirmed(ctx) || errors.Is(err, ErrLeftRunning) {
		return err
	}
	slog.Error("migration: interrupted; PostgreSQL did not confirm that it stopped the migration's statement, which may still run there",
		"partition", partition, "error", err.Error())
	return fmt.Errorf("%w; %w", err, ErrLeftRunning)
}

// migrationLock is the key of the PostgreSQL advisory lock that a partition's migration holds.
func migrationLock(schema string) int64 { return int64(fnv32("credo-migrate:" + schema)) }

// migrationPlan is what a partition's migration does, read from the schema before its first
// change: the steps of its transaction, in order, and on PostgreSQL the lock that each existing
// table they change needs, the strongest of its steps' (see lockTables), and the indexes built
// on existing tables after the transaction (see buildIndexes).
type migrationPlan struct {
	steps  []migrationStep
	locks  map[string]lockMode
	builds []indexBuild
}

// indexBuild is an index that a PostgreSQL migration builds concurrently on a table that
// existed before it: sql (CREATE [UNIQUE] INDEX CONCURRENTLY, when not empty; unique is its
// constraint, checked before the migration's transaction by refuseDuplicatesFirst), then
// dropping the index drop (when not empty), the one the constraint replaces. invalid: an
// index of that name is there but INVALID, left by a build that did not finish; it is dropped
// first.
type indexBuild struct {
	r            *Resource
	table, index string
	sql, drop    string
	unique       *Unique
	invalid      bool
	// check: the records may break unique, whose columns all exist before the migration's
	// transaction (a column it adds is empty in every record).
	check bool
}

// hasColumns reports whether the table whose columns are have has those of fields.
func hasColumns(have map[string]bool, fields []*Field) bool {
	for _, f := range fields {
		if !have[f.Column] {
			return false
		}
	}
	return true
}

// migrationStep is one statement of a migration: sql (when not empty), after checking that
// the records keep unique (when not nil), then dropping the index drop (when not empty). what
// names the statement in its error.
type migrationStep struct {
	r         *Resource
	sql, what string
	unique    *Unique
	drop      string
}

// lockMode is a PostgreSQL table lock mode that a migration takes, as LOCK TABLE names it.
type lockMode string

// The lock mode a migration's transaction takes on a table it changes: ACCESS EXCLUSIVE, to
// add a column or turn the content chunks' compression to lz4 (it stops reads and writes).
// Indexes on existing tables are built after the transaction, concurrently (see
// buildIndexes), and need no lock of its.
const lockExclusive lockMode = "ACCESS EXCLUSIVE"

// needs records that the existing table needs mode, unless it needs a stronger one.
func (p *migrationPlan) needs(table string, mode lockMode) {
	if p.locks[table] != lockExclusive {
		p.locks[table] = mode
	}
}

// lockOrder returns the tables the plan locks, by name: every migration takes its locks in
// that one order.
func (p *migrationPlan) lockOrder() []string {
	tables := make([]string, 0, len(p.locks))
	for t := range p.locks {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	return tables
}

// plan reads the partition's tables, columns and indexes and returns what its migration does.
// An index that exists is not created "IF NOT EXISTS" again: that statement takes a SHARE lock
// on its table even so, held to the end of the migration's transaction, so that a process
// starting beside others that serve the partition (a rolling restart, another replica, credo
// secret) waited for their write transactions, stopped their writes meanwhile, and could
// deadlock with them. Before it creates a unique index the migration looks for the records
// that would break it (refuseDuplicates); once the index exists it drops the one the
// constraint had under the other comparison (Unique.replaces), when a descriptor started or
// stopped folding case. A table the migration creates needs no lock: no other transaction
// sees it before the migration commits, and its indexes are built in the transaction, on no
// rows. On PostgreSQL the indexes of tables that exist, and the drops of those they replace,
// are builds (see buildIndexes), and an INVALID index counts as missing.
func (s *Store) plan(ctx context.Context) (*migrationPlan, error) {
	tables, err := s.tableColumns(ctx)
	if err != nil {
		return nil, err
	}
	indexes, err := s.indexes(ctx)
	if err != nil {
		return nil, err
	}
	lz4, err := s.lz4Tables(ctx)
	if err != nil {
		return nil, err
	}
	p := &migrationPlan{locks: map[string]lockMode{}}
	links := linkIndexes(s.reg)
	for _, r := range s.reg.Resources() {
		stmts := s.DDL(r, links[r])
		have := tables[r.Table]
		if have == nil {
			p.steps = append(p.steps, migrationStep{r: r, sql: stmts[0].sql, what: "table " + r.Table})
		}
		for _, f := range r.Fields {
			if have != nil && !have[f.Column] {
				p.steps = append(p.steps, migrationStep{r: r, what: "add " + r.Table + "." + f.Column,
					sql: fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", s.Table(r), quote(f.Column), s.columnType(f))})
				p.needs(r.Table, lockExclusive)
			}
		}
		for _, stmt := range stmts[1:] {
			step := migrationStep{r: r, what: stmt.sql}
			replaced := ""
			if stmt.unique != nil {
				if _, ok := indexes[stmt.unique.replaces(r)]; ok {
					replaced = stmt.unique.replaces(r)
				}
			}
			if s.dialect == Postgres && stmt.index != "" && tables[stmt.on] != nil {
				b := indexBuild{r: r, table: stmt.on, index: stmt.index, drop: replaced}
				valid, there := indexes[stmt.index]
				if !valid {
					b.sql, b.unique, b.invalid = stmt.concurrently, stmt.unique, there
					b.check = b.unique != nil && hasColumns(tables[stmt.on], b.unique.Fields)
				}
				if b.sql != "" || b.drop != "" {
					p.builds = append(p.builds, b)
				}
				continue
			}
			switch {
			case stmt.table != "":
				if tables[stmt.table] == nil {
					step.sql = stmt.sql
				}
			case stmt.compress:
				// lz4 is nil on a server without it: the chunks keep pglz, and no start-up alters them.
				if lz4 != nil && tables[stmt.on] == nil {
					step.sql = stmt.sql
				} else if lz4 != nil && !lz4[stmt.on] {
					step.sql = stmt.sql
					p.needs(stmt.on, lockExclusive)
				}
			case !indexes[stmt.index]:
				step.sql, step.unique = stmt.sql, stmt.unique
			}
			step.drop = replaced
			if step.sql != "" || step.drop != "" {
				p.steps = append(p.steps, step)
			}
		}
	}
	return p, nil
}

// run runs the plan's steps, in its transaction.
func (s *Store) run(ctx context.Context, p *migrationPlan) error {
	db := s.db.WithContext(ctx)
	for _, step := range p.steps {
		if step.unique != nil {
			if err := s.refuseDuplicates(ctx, step.r, *step.unique); err != nil {
				return err
			}
		}
		if step.sql != "" {
			if err := db.Exec(step.sql).Error; err != nil {
				return fmt.Errorf("%s: %w", step.what, err)
			}
		}
		if step.drop != "" {
			if err := s.dropIndex(ctx, step.drop); err != nil {
				return err
			}
		}
	}
	return nil
}

// refuseDuplicatesFirst runs, on PostgreSQL, the check for values that each unique index to
// be built on an existing table refuses (refuseDuplicates) before the migration's
// transaction: records that break one refuse the migration before it changes anything, as on
// SQLite, and the check holds no lock while it reads the table. A constraint on a column that
// the transaction adds is not checked: the column is empty in every record. A value written
// twice after the check, while the index is built, fails the build (see buildFailed).
func (s *Store) refuseDuplicatesFirst(ctx context.Context) error {
	p, err := s.plan(ctx)
	if err != nil {
		return err
	}
	for _, b := range p.builds {
		if b.check {
			if err := s.refuseDuplicates(backend.Stream(ctx), b.r, *b.unique); err != nil {
				return err
			}
		}
	}
	return nil
}

// upToDate reports whether the SQLite partition has every table, column and index that
// migrate would create, and none that it would drop, reading the schema on the read pool. The
// migration's transaction takes the file's write lock at BEGIN (BEGIN IMMEDIATE), and so
// waited for any other process's write transaction — a `credo load` holds one to its end —
// and failed start-up with "database is locked" past the busy timeout, where a start-up that
// had nothing to migrate used to serve at once: a restart of credo serve, or credo secret,
// during a long load.
func (s *Store) upToDate(ctx context.Context) (bool, error) {
	p, err := s.plan(ctx)
	return err == nil && len(p.steps) == 0, err
}

// indexes returns the partition's indexes, each with whether it is valid: on PostgreSQL a
// concurrent build that did not finish (cancelled, its process killed, a duplicate value met)
// leaves its index INVALID (pg_index.indisvalid), which no query uses and which is to be
// dropped and built again. SQLite's are all valid.
func (s *Store) indexes(ctx context.Context) (map[string]bool, error) {
	q, args := "SELECT name, 1 AS valid FROM sqlite_master WHERE type = 'index'", []any(nil)
	if s.dialect == Postgres {
		q, args = `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index AS i
			JOIN pg_class AS c ON c.oid = i.indexrelid
			JOIN pg_namespace AS n ON n.oid = c.relnamespace
			WHERE n.nspname = ?`, []any{s.schema}
	}
	var rows []struct {
		Name  string
		Valid bool
	}
	if err := s.db.WithContext(ctx).Raw(q, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("indexes: %w", err)
	}
	have := make(map[string]bool, len(rows))
	for _, row := range rows {
		have[row.Name] = row.Valid
	}
	return have, nil
}

// tableColumns returns the partition's tables, each with its column names, from the catalog:
// reading a table itself (SELECT * … WHERE 1 = 0) would lock it on PostgreSQL, before the
// migration takes the lock it needs.
func (s *Store) tableColumns(ctx context.Context) (map[string]map[string]bool, error) {
	q, args := "SELECT m.name AS tbl, c.name AS col FROM sqlite_master AS m, pragma_table_info(m.name) AS c WHERE m.type = 'table'", []any(nil)
	if s.dialect == Postgres {
		q, args = `SELECT c.relname AS tbl, a.attname AS col FROM pg_class AS c
			JOIN pg_namespace AS n ON n.oid = c.relnamespace
			JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
			WHERE n.nspname = ? AND c.relkind IN ('r', 'p')`, []any{s.schema}
	}
	var rows []struct{ Tbl, Col string }
	if err := s.db.WithContext(ctx).Raw(q, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("tables: %w", err)
	}
	tables := map[string]map[string]bool{}
	for _, row := range rows {
		if tables[row.Tbl] == nil {
			tables[row.Tbl] = map[string]bool{}
		}
		tables[row.Tbl][row.Col] = true
	}
	return tables, nil
}

// lz4Tables returns, on a PostgreSQL server that compresses with lz4, the partition's tables
// that have a chunks column, each with whether it is lz4 already; nil on SQLite and on a
// server without lz4 (before PostgreSQL 14, or built without it), where chunks keep pglz.
func (s *Store) lz4Tables(ctx context.Context) (map[string]bool, error) {
	if s.dialect != Postgres {
		return nil, nil
	}
	db := s.db.WithContext(ctx)
	var lz4 []bool
	if err := db.Raw(`SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression'`).Scan(&lz4).Error; err != nil {
		return nil, fmt.Errorf("lz4: %w", err)
	}
	if len(lz4) == 0 || !lz4[0] {
		return nil, nil
	}
	var rows []struct {
		Tbl string
		LZ4 bool
	}
	if err := db.Raw(`SELECT c.relname AS tbl, a.attcompression = 'l' AS lz4 FROM pg_class AS c
		JOIN pg_namespace AS n ON n.oid = c.relnamespace
		JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = ? AND NOT a.attisdropped
		WHERE n.nspname = ? AND c.relkind IN ('r', 'p')`, dataColumn, s.schema).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("lz4: %w", err)
	}
	tables := map[string]bool{}
	for _, row := range rows {
		tables[row.Tbl] = row.LZ4
	}
	return tables, nil
}
