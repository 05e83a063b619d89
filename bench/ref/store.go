package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", the current modernc release
)

// comment is a users-comments row in its stored form.
type comment struct {
	ID, CreatedBy, Org, User string
	Text                     sql.NullString
	Created                  string
}

// gradebook is a gradebooks row in its stored form; uuid members may be null.
type gradebook struct {
	ID, Achievement, Event, Framework, Org, Period sql.NullString
	IsLocked                                       sql.NullBool
	Title, Type, ChangeType, ChangeUser, Reference sql.NullString
	Created, Changed                               sql.NullString
}

var errNotFound = errors.New("not found")

// store is the few statements the reference server runs, prepared once per connection.
type store interface {
	get(ctx context.Context, partition, id string) (comment, error)
	list(ctx context.Context, partition, org, user string, take int, fn func(*comment) error) error
	count(ctx context.Context, partition, org, user string) (int64, error)
	insert(ctx context.Context, partition string, c *comment) error
	gradebooks(ctx context.Context, partition string, take, offset int, fn func(*gradebook) error) error
	ping(ctx context.Context, partition string) error
	close()
}

// The statements, as credo's engine builds them, with {t} and {g} standing for the
// partition's comments and gradebooks tables and ? for a parameter.
const (
	commentCols       = `t."comment_identifier", t."comment_created_by", t."organization_identifier", t."user_identifier", t."comment_text", t."comment_created"`
	sqlGet            = `SELECT ` + commentCols + ` FROM {t} AS t WHERE "t"."comment_identifier" = ? LIMIT 1`
	sqlList           = `SELECT ` + commentCols + ` FROM {t} AS t WHERE "t"."organization_identifier" = ? AND "t"."user_identifier" = ? ORDER BY "t"."comment_created" DESC,"t"."comment_identifier" LIMIT ?`
	sqlCountPair      = `SELECT count(*) FROM {t} AS t WHERE "t"."organization_identifier" = ? AND "t"."user_identifier" = ?`
	sqlCountOrg       = `SELECT count(*) FROM {t} AS t WHERE "t"."organization_identifier" = ?`
	sqlInsert         = `INSERT INTO {t} ("comment_created","comment_created_by","comment_identifier","comment_text","organization_identifier","user_identifier") VALUES (?,?,?,?,?,?)`
	gradebookCols     = `t."gradebook_identifier", t."achievement_identifier", t."event_identifier", t."framework_identifier", t."organization_identifier", t."period_identifier", t."is_locked", t."gradebook_title", t."gradebook_type", t."last_change_type", t."last_change_user", t."reference", t."gradebook_created", t."last_change_time"`
	sqlGradebooks     = `SELECT ` + gradebookCols + ` FROM {g} AS t ORDER BY "t"."gradebook_title","t"."gradebook_identifier"`
	sqlGradebooksPage = sqlGradebooks + ` LIMIT ? OFFSET ?`
)

// statements names every statement; the PostgreSQL store prepares them under these names.
var statements = map[string]string{
	"get": sqlGet, "list": sqlList, "countPair": sqlCountPair, "countOrg": sqlCountOrg, "insert": sqlInsert,
	"gradebooks": sqlGradebooks, "gradebooksPage": sqlGradebooksPage,
}

// render puts the tables and the dialect's placeholders into a statement.
func render(stmt, comments, gradebooks string, dollar bool) string {
	stmt = strings.NewReplacer("{t}", comments, "{g}", gradebooks).Replace(stmt)
	if !dollar {
		return stmt
	}
	var b strings.Builder
	n := 0
	for _, c := range stmt {
		if c == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func quote(s string) string { return `"` + s + `"` }

// pgStore runs the statements on a pgx pool, prepared on every new connection.
type pgStore struct {
	pool *pgxpool.Pool
}

func pgName(partition, stmt string) string { return partition + "_" + stmt }

func openPostgres(ctx context.Context, url string, partitions []string, maxConns int32) (*pgStore, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = maxConns
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		for _, p := range partitions {
			for name, stmt := range statements {
				sqlText := render(stmt, quote(p)+"."+quote("user_comments"), quote(p)+"."+quote("gradebooks"), true)
				if _, err := c.Prepare(ctx, pgName(p, name), sqlText); err != nil {
					return fmt.Errorf("prepare %s: %w", name, err)
				}
			}
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &pgStore{pool: pool}, nil
}

func (s *pgStore) close() { s.pool.Close() }

func (s *pgStore) ping(ctx context.Context, _ string) error { return s.pool.Ping(ctx) }

func (s *pgStore) get(ctx context.Context, p, id string) (comment, error) {
	var c comment
	err := s.pool.QueryRow(ctx, pgName(p, "get"), id).Scan(&c.ID, &c.CreatedBy, &c.Org, &c.User, &c.Text, &c.Created)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, errNotFound
	}
	return c, err
}

func (s *pgStore) list(ctx context.Context, p, org, user string, take int, fn func(*comment) error) error {
	rows, err := s.pool.Query(ctx, pgName(p, "list"), org, user, take)
	if err != nil {
		return err
	}
	defer rows.Close()
	var c comment
	for rows.Next() {
		if err := rows.Scan(&c.ID, &c.CreatedBy, &c.Org, &c.User, &c.Text, &c.Created); err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (s *pgStore) count(ctx context.Context, p, org, user string) (int64, error) {
	var n int64
	var err error
	if user == "" {
		err = s.pool.QueryRow(ctx, pgName(p, "countOrg"), org).Scan(&n)
	} else {
		err = s.pool.QueryRow(ctx, pgName(p, "countPair"), org, user).Scan(&n)
	}
	return n, err
}

func (s *pgStore) insert(ctx context.Context, p string, c *comment) error {
	_, err := s.pool.Exec(ctx, pgName(p, "insert"), c.Created, c.CreatedBy, c.ID, c.Text, c.Org, c.User)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return errConflict
	}
	return err
}

var errConflict = errors.New("duplicate key")

func (s *pgStore) gradebooks(ctx context.Context, p string, take, offset int, fn func(*gradebook) error) error {
	var rows pgx.Rows
	var err error
	if take > 0 {
		rows, err = s.pool.Query(ctx, pgName(p, "gradebooksPage"), take, offset)
	} else {
		rows, err = s.pool.Query(ctx, pgName(p, "gradebooks"))
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	var g gradebook
	for rows.Next() {
		if err := rows.Scan(g.dests()...); err != nil {
			return err
		}
		if err := fn(&g); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (g *gradebook) dests() []any {
	return []any{&g.ID, &g.Achievement, &g.Event, &g.Framework, &g.Org, &g.Period, &g.IsLocked,
		&g.Title, &g.Type, &g.ChangeType, &g.ChangeUser, &g.Reference, &g.Created, &g.Changed}
}

// sqliteStore runs the statements with database/sql on one SQLite file per partition: a read
// pool and a single writer connection (SQLite serializes writers anyway; one connection spares
// them the busy-wait), WAL, every statement prepared once per connection.
type sqliteStore struct {
	parts map[string]*sqlitePart
}

type sqlitePart struct {
	read, write *sql.DB
	stmts       map[string]*sql.Stmt
}

// writeStatements run on the writer connection; the others on the read pool.
var writeStatements = map[string]bool{"insert": true}

// openSQLite opens each partition's file twice: readers (maxConns connections) and one writer.
func openSQLite(dir string, partitions []string, maxConns int) (*sqliteStore, error) {
	s := &sqliteStore{parts: map[string]*sqlitePart{}}
	for _, p := range partitions {
		dsn := filepath.Join(dir, p+".db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
			"&_pragma=synchronous(NORMAL)&_txlock=immediate"
		part := &sqlitePart{stmts: map[string]*sql.Stmt{}}
		s.parts[p] = part
		var err error
		if part.read, err = sql.Open("sqlite", dsn); err != nil {
			s.close()
			return nil, err
		}
		part.read.SetMaxOpenConns(maxConns)
		part.read.SetMaxIdleConns(maxConns)
		if part.write, err = sql.Open("sqlite", dsn); err != nil {
			s.close()
			return nil, err
		}
		part.write.SetMaxOpenConns(1)
		part.write.SetMaxIdleConns(1)
		for name, stmt := range statements {
			db := part.read
			if writeStatements[name] {
				db = part.write
			}
			st, err := db.Prepare(render(stmt, quote("user_comments"), quote("gradebooks"), false))
			if err != nil {
				s.close()
				return nil, fmt.Errorf("prepare %s: %w", name, err)
			}
			part.stmts[name] = st
		}
	}
	return s, nil
}

func (s *sqliteStore) close() {
	for _, p := range s.parts {
		for _, st := range p.stmts {
			st.Close()
		}
		for _, db := range []*sql.DB{p.read, p.write} {
			if db != nil {
				db.Close()
			}
		}
	}
}

func (s *sqliteStore) stmt(p, name string) *sql.Stmt { return s.parts[p].stmts[name] }

func (s *sqliteStore) ping(ctx context.Context, p string) error {
	return s.parts[p].read.PingContext(ctx)
}

func (s *sqliteStore) get(ctx context.Context, p, id string) (comment, error) {
	var c comment
	err := s.stmt(p, "get").QueryRowContext(ctx, id).Scan(&c.ID, &c.CreatedBy, &c.Org, &c.User, &c.Text, &c.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return c, errNotFound
	}
	return c, err
}

func (s *sqliteStore) list(ctx context.Context, p, org, user string, take int, fn func(*comment) error) error {
	rows, err := s.stmt(p, "list").QueryContext(ctx, org, user, take)
	if err != nil {
		return err
	}
	defer rows.Close()
	var c comment
	for rows.Next() {
		if err := rows.Scan(&c.ID, &c.CreatedBy, &c.Org, &c.User, &c.Text, &c.Created); err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (s *sqliteStore) count(ctx context.Context, p, org, user string) (int64, error) {
	var n int64
	var err error
	if user == "" {
		err = s.stmt(p, "countOrg").QueryRowContext(ctx, org).Scan(&n)
	} else {
		err = s.stmt(p, "countPair").QueryRowContext(ctx, org, user).Scan(&n)
	}
	return n, err
}

func (s *sqliteStore) insert(ctx context.Context, p string, c *comment) error {
	_, err := s.stmt(p, "insert").ExecContext(ctx, c.Created, c.CreatedBy, c.ID, c.Text, c.Org, c.User)
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint") {
		return errConflict
	}
	return err
}

func (s *sqliteStore) gradebooks(ctx context.Context, p string, take, offset int, fn func(*gradebook) error) error {
	var rows *sql.Rows
	var err error
	if take > 0 {
		rows, err = s.stmt(p, "gradebooksPage").QueryContext(ctx, take, offset)
	} else {
		rows, err = s.stmt(p, "gradebooks").QueryContext(ctx)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	var g gradebook
	for rows.Next() {
		if err := rows.Scan(g.dests()...); err != nil {
			return err
		}
		if err := fn(&g); err != nil {
			return err
		}
	}
	return rows.Err()
}
