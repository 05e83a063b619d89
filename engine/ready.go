package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"credo/engine/backend"
)

// maxMissingShown bounds the columns that a Ready error names.
const maxMissingShown = 10

// requiredColumns lists, as "table.column" and sorted, every column the resources read and
// write: each stored member's, and a content table's key, sequence, chunk and time. Table and
// column names are identifiers (identRe), which hold no dot.
func requiredColumns(resources []*Resource) []string {
	var out []string
	for _, r := range resources {
		for _, f := range r.Fields {
			out = append(out, r.Table+"."+f.Column)
		}
		if r.Content != "" {
			for _, k := range r.Key {
				out = append(out, r.Content+"."+k.Column)
			}
			for _, c := range []string{seqColumn, dataColumn, writtenColumn} {
				out = append(out, r.Content+"."+c)
			}
		}
	}
	sort.Strings(out)
	return out
}

// readySQL lists which of the required columns (one parameter: a text array on PostgreSQL, a
// JSON array on SQLite) the partition's tables lack: none when it is migrated. One catalog
// read of the schema's columns, a few hundred rows (docs/operations.md, "Readiness", has its
// cost).
var readySQL = map[Dialect]string{
	Postgres: `SELECT w FROM unnest($2::text[]) AS w EXCEPT
		SELECT c.relname || '.' || a.attname FROM pg_class AS c
		JOIN pg_namespace AS n ON n.oid = c.relnamespace
		JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
		ORDER BY 1`,
	SQLite: `SELECT value FROM json_each(?) EXCEPT
		SELECT m.name || '.' || c.name FROM sqlite_master AS m, pragma_table_info(m.name) AS c
		WHERE m.type = 'table'
		ORDER BY 1`,
}

// Ready reports whether the partition can serve: its database answers within ctx and its tables
// have every column the descriptors need (a schema dropped or never migrated, or a table or
// column an operator dropped or renamed while credo serves, is not ready: every request that
// reads it would fail). Like Ping it runs on the connection apart from the request pool, so a
// busy pool does not make it fail. The error says "not migrated" and names what is missing, or
// wraps ErrUnavailable when the database does not answer.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.Ping(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	missing, err := s.missingColumns(ctx)
	if err != nil {
		return fmt.Errorf("engine: ready %s: %w: %v", s.Partition, ErrUnavailable, err)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("engine: ready %s: the partition is not migrated: %s", s.Partition, s.missingText(missing))
}

// missingText says which of the required columns are missing, at most maxMissingShown of them:
// "1 of the 384 columns the descriptors need are missing: users.email".
func (s *Store) missingText(missing []string) string {
	n := len(missing)
	if n > maxMissingShown {
		missing = append(missing[:maxMissingShown:maxMissingShown], "…")
	}
	return fmt.Sprintf("%d of the %d columns the descriptors need are missing: %s", n, len(s.reg.columns), strings.Join(missing, ", "))
}

// missingColumns runs readySQL on the probe's connection.
func (s *Store) missingColumns(ctx context.Context) ([]string, error) {
	var rows backend.Rows
	var err error
	if s.dialect == Postgres {
		rows, err = s.database.probe.Query(ctx, func() {}, readySQL[Postgres], []any{s.schema, s.reg.columns})
	} else {
		var list []byte
		if list, err = json.Marshal(s.reg.columns); err == nil {
			rows, err = s.sqliteProbe.QueryContext(ctx, readySQL[SQLite], string(list))
		}
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		missing = append(missing, c)
	}
	return missing, rows.Err()
}
