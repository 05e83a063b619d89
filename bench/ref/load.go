package main

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// loadColumns are the users-comments columns a load fills, in the order of loadHeader.
var (
	loadHeader  = []string{"CommentIdentifier", "CommentCreatedBy", "OrganizationIdentifier", "UserIdentifier", "CommentText", "CommentCreated"}
	loadColumns = []string{"comment_identifier", "comment_created_by", "organization_identifier", "user_identifier", "comment_text", "comment_created"}
)

// sqliteLoadBatch is how many rows one prepared multi-row INSERT takes on SQLite.
const sqliteLoadBatch = 500

// load is `credo-ref load`: the raw bulk insert that `credo load` is measured against. It
// reads a CSV of users-comments with loadHeader's columns, converts each value to its stored
// form (checking only what conversion needs) and inserts every row in one transaction: COPY
// on PostgreSQL, prepared multi-row INSERTs on SQLite. The partition's tables must exist.
func load(ctx context.Context, database, partition, file string) (int, error) {
	rows, err := readLoadFile(file)
	if err != nil {
		return 0, err
	}
	if dir, ok := strings.CutPrefix(database, "sqlite:"); ok {
		return len(rows), loadSQLite(ctx, filepath.Join(dir, partition+".db"), rows)
	}
	return len(rows), loadPostgres(ctx, database, partition, rows)
}

// readLoadFile reads and converts the whole file, as credo load does before writing.
func readLoadFile(file string) ([][]any, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", file, err)
	}
	if strings.Join(head, ",") != strings.Join(loadHeader, ",") {
		return nil, fmt.Errorf("%s: header %v, want %v", file, head, loadHeader)
	}
	var rows [][]any
	for i := 0; ; i++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		row := make([]any, len(rec))
		for j := 0; j < 4; j++ {
			if row[j], err = parseUUID(rec[j]); err != nil {
				return nil, fmt.Errorf("%s: row %d: %s: %w", file, i, loadHeader[j], err)
			}
		}
		if rec[4] != "" {
			row[4] = strings.Clone(rec[4])
		}
		if row[5], err = storedFrom(rec[5]); err != nil {
			return nil, fmt.Errorf("%s: row %d: CommentCreated: %w", file, i, err)
		}
		rows = append(rows, row)
	}
}

// uuidBytes is a UUID's 16 bytes: what COPY's binary format takes for a uuid column.
type uuidBytes [16]byte

func parseUUID(s string) (uuidBytes, error) {
	var u uuidBytes
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, fmt.Errorf("%q is not a UUID", s)
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, fmt.Errorf("%q is not a UUID", s)
	}
	return u, nil
}

// String is the UUID's lower-case text, as SQLite stores it.
func (u uuidBytes) String() string {
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// storedFrom converts an API datetime with its offset to the stored form (see storedLen).
func storedFrom(s string) (string, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", err
	}
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	u := t.UTC()
	b := u.AppendFormat(make([]byte, 0, storedLen), "2006-01-02T15:04:05")
	b = fmt.Appendf(b, ".%07dZ%c%02d:%02d", u.Nanosecond()/100, sign, off/3600, off%3600/60)
	return string(b), nil
}

func loadPostgres(ctx context.Context, url, partition string, rows [][]any) error {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it does nothing
	for _, row := range rows {
		for j := 0; j < 4; j++ {
			row[j] = [16]byte(row[j].(uuidBytes))
		}
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{partition, "user_comments"}, loadColumns, pgx.CopyFromRows(rows))
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if n != int64(len(rows)) {
		return fmt.Errorf("copy: %d of %d rows", n, len(rows))
	}
	return tx.Commit(ctx)
}

func loadSQLite(ctx context.Context, file string, rows [][]any) error {
	// A 64 MiB page cache for the load's one transaction, as credo load takes.
	db, err := sql.Open("sqlite", file+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"+
		"&_pragma=cache_size(-65536)&_txlock=immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	insert := func(n int) (*sql.Stmt, error) {
		one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(loadColumns)), ",") + ")"
		return tx.PrepareContext(ctx, "INSERT INTO user_comments ("+strings.Join(loadColumns, ",")+") VALUES "+
			strings.TrimSuffix(strings.Repeat(one+",", n), ","))
	}
	full, err := insert(sqliteLoadBatch)
	if err != nil {
		return err
	}
	args := make([]any, 0, sqliteLoadBatch*len(loadColumns))
	for start := 0; start < len(rows); start += sqliteLoadBatch {
		batch := rows[start:min(start+sqliteLoadBatch, len(rows))]
		args = args[:0]
		for _, row := range batch {
			for j, v := range row {
				if j < 4 {
					v = v.(uuidBytes).String()
				}
				args = append(args, v)
			}
		}
		st := full
		if len(batch) < sqliteLoadBatch {
			if st, err = insert(len(batch)); err != nil {
				return err
			}
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
	}
	return tx.Commit()
}
