package engine

import (
	"context"
	"fmt"
	"sort"
)

// Migrate creates the partition's schema, tables and indexes, and adds columns that
// descriptors gained since the tables were created. It runs in one transaction, all or
// nothing: a unique index that the records would break is a *DuplicatesError naming them, and
// leaves the partition as it was. On PostgreSQL the transaction holds an advisory lock, so
// that processes starting together do not race, and it takes every table lock it needs before
// its first change (see migrateLocked). On SQLite a partition that lacks nothing is not
// migrated (see upToDate).
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
	return s.migrateLocked(ctx)
}

// migrationLock is the key of the PostgreSQL advisory lock that a partition's migration holds.
func migrationLock(schema string) int64 { return int64(fnv32("credo-migrate:" + schema)) }

// migrationPlan is what a partition's migration does, read from the schema before its first
// change: the steps, in order, and on PostgreSQL the lock that each existing table they change
// needs, the strongest of its steps' (see lockTables).
type migrationPlan struct {
	steps []migrationStep
	locks map[string]lockMode
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

// The lock modes a migration takes on a table it changes: SHARE to create indexes (it lets
// reads through and stops writes), ACCESS EXCLUSIVE to add a column, drop an index or turn
// the content chunks' compression to lz4 (it stops reads too).
const (
	lockShare     lockMode = "SHARE"
	lockExclusive lockMode = "ACCESS EXCLUSIVE"
)

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
// sees it before the migration commits.
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
				if tables[stmt.on] != nil {
					p.needs(stmt.on, lockShare)
				}
			}
			if stmt.unique != nil && indexes[stmt.unique.replaces(r)] {
				step.drop = stmt.unique.replaces(r)
				p.needs(r.Table, lockExclusive)
			}
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

// indexes returns the names of the partition's indexes.
func (s *Store) indexes(ctx context.Context) (map[string]bool, error) {
	q, args := "SELECT name FROM sqlite_master WHERE type = 'index'", []any(nil)
	if s.dialect == Postgres {
		q, args = "SELECT indexname FROM pg_indexes WHERE schemaname = ?", []any{s.schema}
	}
	var names []string
	if err := s.db.WithContext(ctx).Raw(q, args...).Scan(&names).Error; err != nil {
		return nil, fmt.Errorf("indexes: %w", err)
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
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
