package engine

import (
	"context"
	"fmt"
	"strings"
)

// columnType returns the SQL type of a field. Text columns on PostgreSQL use the "C" collation
// so that sorting and comparison are byte-wise, as on SQLite, and datetime text orders by instant.
func (s *Store) columnType(f *Field) string {
	if s.dialect == Postgres {
		switch f.Type {
		case TypeUUID:
			return "uuid"
		case TypeBool:
			return "boolean"
		case TypeInt:
			return "integer"
		default:
			return `text COLLATE "C"`
		}
	}
	switch f.Type {
	case TypeBool, TypeInt:
		return "INTEGER"
	default:
		return "TEXT"
	}
}

// indexName names an index after its table and columns, so that a unique violation reported
// by PostgreSQL can be traced back to the fields.
func indexName(prefix string, r *Resource, fields []*Field) string {
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f.Column
	}
	return identifier(prefix + "_" + r.Table + "_" + strings.Join(cols, "_"))
}

// identifier returns name as a PostgreSQL identifier of at most 63 bytes: a longer one is cut
// to 50 and given a hash of the whole, where PostgreSQL would cut it silently (and a migration
// looking for the full name would never find the index it made).
func identifier(name string) string {
	if len(name) > 63 {
		name = fmt.Sprintf("%s_%x", name[:50], fnv32(name))
	}
	return name
}

// skipsEmpty reports whether the index of a unique constraint with f leaves out the records
// whose f is the empty string (WHERE f <> ”): an omitted string member is stored as "", and
// must not collide with other omitted ones. A query that is to use such an index must carry the
// same condition.
func skipsEmpty(f *Field) bool { return f.Type == TypeString && !f.Key }

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// IndexPlan lists the indexes a resource gets: unique constraints, then one index per filter,
// per scope field and for the default sort (with the key appended), then the extra ones.
// Single-field indexes that another index already leads with are dropped; the index of a
// constraint that folds case leads with an expression, which serves no comparison of the
// column itself (an exact filter), and so covers nothing.
func IndexPlan(r *Resource) (unique []Unique, plain [][]*Field) {
	unique = r.Unique
	var cands [][]*Field
	sortIdx := []*Field{}
	for _, t := range r.DefaultSort {
		sortIdx = append(sortIdx, t.Field)
	}
	if !(len(sortIdx) == len(r.Key) && sameFields(sortIdx, r.Key)) {
		for _, k := range r.Key {
			if !containsField(sortIdx, k) {
				sortIdx = append(sortIdx, k)
			}
		}
		cands = append(cands, sortIdx)
	}
	cands = append(cands, r.Indexes...)
	for _, sc := range r.Scope {
		if sc.Field != nil {
			cands = append(cands, []*Field{sc.Field})
		}
		for _, c := range sc.Any {
			cands = append(cands, []*Field{c.Local})
		}
	}
	for _, f := range r.Filters {
		if f.Field.Stored() {
			cands = append(cands, []*Field{f.Field})
		} else if c := f.Field.Computed; c != nil && !c.Count {
			cands = append(cands, []*Field{c.Local})
		}
	}
	covered := func(lead *Field) bool {
		if r.Key[0] == lead {
			return true
		}
		for _, u := range unique {
			if u.Fields[0] == lead && !u.folds(lead) {
				return true
			}
		}
		for _, set := range plain {
			if set[0] == lead {
				return true
			}
		}
		return false
	}
	for _, c := range cands {
		if len(c) == 1 && covered(c[0]) {
			continue
		}
		dup := false
		for _, p := range plain {
			dup = dup || sameFields(p, c)
		}
		if !dup {
			plain = append(plain, c)
		}
	}
	return unique, plain
}

func sameFields(a, b []*Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsField(fs []*Field, f *Field) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

// Remote tables of computed members and links are indexed on the remote field, so that the
// correlated subqueries are index lookups.
func linkIndexes(reg *Registry) map[*Resource][][]*Field {
	out := map[*Resource][][]*Field{}
	add := func(c *Computed) {
		if c == nil || c.Remote.Key && len(c.From.Key) == 1 {
			return
		}
		out[c.From] = append(out[c.From], []*Field{c.Remote})
	}
	for _, r := range reg.Resources() {
		for _, f := range r.Members {
			add(f.Computed)
		}
		// A filter on a lookup runs `local IN (SELECT remote FROM from WHERE field op ?)`.
		for _, f := range r.Filters {
			if c := f.Field.Computed; c != nil && !c.Count {
				out[c.From] = append(out[c.From], []*Field{c.Field, c.Remote})
			}
		}
		for _, sc := range r.Scope {
			for _, c := range append([]*Computed{sc.Via}, sc.Any...) {
				if c != nil {
					add(c)
					out[c.From] = append(out[c.From], []*Field{c.Field, c.Remote})
				}
			}
		}
	}
	return out
}

// ddlStatement is one statement of a resource's DDL; table names the table it creates and
// index the index, if any, and unique is the constraint whose index it is (nil for others).
// content marks the statements of the resource's content table.
type ddlStatement struct {
	sql, table, index string
	unique            *Unique
	content           bool
}

// DDL returns the statements that create a resource's table and indexes, idempotently: the
// table first, then its indexes and its content table.
func (s *Store) DDL(r *Resource, extra [][]*Field) []ddlStatement {
	var cols []string
	for _, f := range r.Fields {
		col := quote(f.Column) + " " + s.columnType(f)
		if f.Key {
			col += " NOT NULL"
		}
		cols = append(cols, col)
	}
	keys := make([]string, len(r.Key))
	for i, k := range r.Key {
		keys[i] = quote(k.Column)
	}
	cols = append(cols, "PRIMARY KEY ("+strings.Join(keys, ", ")+")")
	stmts := []ddlStatement{{sql: fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n  %s\n)", s.Table(r), strings.Join(cols, ",\n  ")), table: r.Table}}
	unique, plain := IndexPlan(r)
	for _, e := range extra {
		dup := false
		for _, p := range plain {
			dup = dup || len(p) >= len(e) && sameFields(p[:len(e)], e)
		}
		if !dup && !(len(e) == 1 && e[0] == r.Key[0]) {
			plain = append(plain, e)
		}
	}
	for _, u := range unique {
		cols := make([]string, len(u.Fields))
		var where []string
		for i, f := range u.Fields {
			cols[i] = s.uniqueExpr("", u, f)
			// An omitted string is stored as "": it must not collide with other omitted ones.
			if skipsEmpty(f) {
				where = append(where, quote(f.Column)+" <> ''")
			}
		}
		name := uniqueIndexName(r, u)
		stmt := fmt.Sprintf("CREATE UNIQUE INDEX IF NOT EXISTS %s ON %s (%s)", quote(name), s.Table(r), strings.Join(cols, ", "))
		if len(where) > 0 {
			stmt += " WHERE " + strings.Join(where, " AND ")
		}
		stmts = append(stmts, ddlStatement{sql: stmt, index: name, unique: &u})
	}
	for _, p := range plain {
		cols := make([]string, len(p))
		for i, f := range p {
			cols[i] = quote(f.Column)
		}
		name := indexName("ix", r, p)
		stmts = append(stmts, ddlStatement{sql: fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (%s)", quote(name), s.Table(r), strings.Join(cols, ", ")), index: name})
	}
	if r.Content != "" {
		stmts = append(stmts, s.contentDDL(r)...)
	}
	return stmts
}

// Migrate creates the partition's schema, tables and indexes, and adds columns that
// descriptors gained since the tables were created. It runs in one transaction, all or
// nothing: a unique index that the records would break is a *DuplicatesError naming them, and
// leaves the partition as it was. On PostgreSQL the transaction holds an advisory lock, so
// that processes starting together do not race. On SQLite a partition that lacks nothing is
// not migrated (see upToDate).
func (s *Store) Migrate(ctx context.Context) (err error) {
	defer wrap(&err, "migrate %s", s.Partition)
	if s.dialect != Postgres {
		if done, err := s.upToDate(ctx); err != nil || done {
			return err
		}
		return s.transaction(ctx, func(tx *Store) error { return tx.migrate(ctx) })
	}
	return s.transaction(ctx, func(tx *Store) error {
		if err := tx.db.Exec("SELECT pg_advisory_xact_lock(?)", migrationLock(s.schema)).Error; err != nil {
			if timedOut(err) {
				// Not the database's silence: another process's migration, which may build an
				// index on a large table, held the lock. %v: start-up does not report it as the
				// database not answering.
				return fmt.Errorf("another process (a replica starting beside this one, credo secret, load or seed) was migrating %s and held its lock for more than %v; start again once it is done, or raise --database-timeout: %v", s.Partition, s.timeout, err)
			}
			return fmt.Errorf("lock: %w", err)
		}
		if err := tx.db.Exec("CREATE SCHEMA IF NOT EXISTS " + quote(s.schema)).Error; err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		return tx.migrate(ctx)
	})
}

// migrationLock is the key of the PostgreSQL advisory lock that a partition's migration holds.
func migrationLock(schema string) int64 { return int64(fnv32("credo-migrate:" + schema)) }

// migrate runs the DDL that the partition lacks. An index that exists is not created "IF NOT
// EXISTS" again: that statement takes a SHARE lock on its table even so, held to the end of the
// migration's transaction, so that a process starting beside others that serve the partition
// (a rolling restart, another replica, credo secret) waited for their write transactions,
// stopped their writes meanwhile, and could deadlock with them. Before it creates a unique
// index it looks for the records that would break it (refuseDuplicates); once the index
// exists it drops the one the constraint had under the other comparison (Unique.replaces),
// when a descriptor started or stopped folding case.
func (s *Store) migrate(ctx context.Context) error {
	db := s.db.WithContext(ctx)
	links := linkIndexes(s.reg)
	indexes, err := s.indexes(ctx)
	if err != nil {
		return err
	}
	for _, r := range s.reg.Resources() {
		stmts := s.DDL(r, links[r])
		if err := db.Exec(stmts[0].sql).Error; err != nil {
			return fmt.Errorf("table %s: %w", r.Table, err)
		}
		have, err := s.columns(ctx, r)
		if err != nil {
			return err
		}
		if err := s.lockFor(ctx, r, stmts, have, indexes); err != nil {
			return err
		}
		for _, f := range r.Fields {
			if have[f.Column] {
				continue
			}
			alter := fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", s.Table(r), quote(f.Column), s.columnType(f))
			if err := db.Exec(alter).Error; err != nil {
				return fmt.Errorf("add %s.%s: %w", r.Table, f.Column, err)
			}
		}
		for _, stmt := range stmts[1:] {
			if stmt.index == "" || !indexes[stmt.index] {
				if stmt.unique != nil {
					if err := s.refuseDuplicates(ctx, r, *stmt.unique); err != nil {
						return err
					}
				}
				if err := db.Exec(stmt.sql).Error; err != nil {
					return fmt.Errorf("%s: %w", stmt.sql, err)
				}
			}
			if stmt.unique != nil && indexes[stmt.unique.replaces(r)] {
				if err := s.dropIndex(ctx, stmt.unique.replaces(r)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// lockFor takes, on PostgreSQL, the strongest lock that the migration of r's table will need,
// before any statement of it takes a weaker one: ACCESS EXCLUSIVE when it adds a column or
// drops the index a unique constraint had under its other comparison, SHARE when it only
// creates indexes, nothing when it has nothing to do. A migration that took SHARE by CREATE
// INDEX and then asked for ACCESS EXCLUSIVE by DROP INDEX deadlocked with a serving process
// that had read the table in a transaction and then wrote it (a people import beside the
// first start-up of a release: SQLSTATE 40P01, the start-up or the request failed). Taken
// first, the lock waits for the transactions using the table, which do not wait for the
// migration, and the check for values that a unique index refuses (refuseDuplicates) sees
// the rows the index is built on: no write lands between them. SQLite's migration holds the
// whole file from BEGIN IMMEDIATE.
func (s *Store) lockFor(ctx context.Context, r *Resource, stmts []ddlStatement, have, indexes map[string]bool) error {
	if s.dialect != Postgres {
		return nil
	}
	mode := ""
	for _, f := range r.Fields {
		if !have[f.Column] {
			mode = "ACCESS EXCLUSIVE"
		}
	}
	for _, stmt := range stmts[1:] {
		if stmt.unique != nil && indexes[stmt.unique.replaces(r)] {
			mode = "ACCESS EXCLUSIVE"
		}
		if mode == "" && !stmt.content && stmt.index != "" && !indexes[stmt.index] {
			mode = "SHARE"
		}
	}
	if mode == "" {
		return nil
	}
	if err := s.db.WithContext(ctx).Exec("LOCK TABLE " + s.Table(r) + " IN " + mode + " MODE").Error; err != nil {
		if timedOut(err) {
			// The database answered: other transactions held the table. %v: start-up does not
			// report it as the database not answering.
			return fmt.Errorf("the migration changes table %s, and transactions of other processes (a replica's requests, a credo load) used it for more than %v; start again once they are done, or raise --database-timeout: %v", r.Table, s.timeout, err)
		}
		return fmt.Errorf("lock %s: %w", r.Table, err)
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
	var names []string
	if err := s.db.WithContext(ctx).Raw("SELECT name FROM sqlite_master WHERE type = 'table'").Scan(&names).Error; err != nil {
		return false, fmt.Errorf("tables: %w", err)
	}
	tables := make(map[string]bool, len(names))
	for _, n := range names {
		tables[n] = true
	}
	indexes, err := s.indexes(ctx)
	if err != nil {
		return false, err
	}
	links := linkIndexes(s.reg)
	for _, r := range s.reg.Resources() {
		for _, stmt := range s.DDL(r, links[r]) {
			if stmt.table != "" && !tables[stmt.table] || stmt.index != "" && !indexes[stmt.index] ||
				stmt.unique != nil && indexes[stmt.unique.replaces(r)] {
				return false, nil
			}
		}
		have, err := s.columns(ctx, r)
		if err != nil {
			return false, err
		}
		for _, f := range r.Fields {
			if !have[f.Column] {
				return false, nil
			}
		}
	}
	return true, nil
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

// columns lists a table's column names as the database reports them.
func (s *Store) columns(ctx context.Context, r *Resource) (map[string]bool, error) {
	rows, err := s.db.WithContext(ctx).Raw("SELECT * FROM " + s.Table(r) + " WHERE 1 = 0").Rows()
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", r.Table, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", r.Table, err)
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	return have, nil
}
