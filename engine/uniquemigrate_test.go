package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestMigrationRefusesEmailsThatDifferInCase: a partition made by a version whose users'
// Email was unique as stored may hold Emails that differ only in case. The first start-up
// of this version refuses to migrate it, naming the partition, the values and the users that
// hold them, and leaves the partition as it was (no index, no column of the migration: it is
// one transaction on both stores). Once the operator has made them unique, the migration
// creates the folded index and drops the exact one it replaces.
func TestMigrationRefusesEmailsThatDifferInCase(t *testing.T) {
	old := previousRegistry(t)
	reg := fixtureRegistry(t)
	ctx := context.Background()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			db, err := engine.Open(ctx, b.URL, []string{p}, old)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := db.Store(p)
			users := old.MustByName("User")
			ann := mustCreate(t, s, users, `{"Email":"Ann@Example.com"}`).Get(users, "UserIdentifier").(string)
			ann2 := mustCreate(t, s, users, `{"Email":"ann@example.com"}`).Get(users, "UserIdentifier").(string)
			mustCreate(t, s, users, `{"Email":"bob@example.com"}`)
			mustCreate(t, s, users, `{"Email":"BOB@example.com"}`)
			mustCreate(t, s, users, `{"Email":"carol@example.com"}`)
			mustCreate(t, s, users, `{}`)
			mustCreate(t, s, users, `{}`)
			db.Close()
			before := schemaOf(t, b, p)

			_, err = engine.Open(ctx, b.URL, []string{p}, reg)
			var dup *engine.DuplicatesError
			if !errors.As(err, &dup) || dup.Values != 2 || len(dup.Records) != 4 {
				t.Fatalf("start-up on Emails that differ in case: %v; want a DuplicatesError of 2 values, 4 users", err)
			}
			for _, want := range []string{"partition " + p, "User (table users)", "(Email, ignoring ASCII case)", "2 values are each held by more than one User",
				`UserIdentifier="` + ann + `" Email="Ann@Example.com"`, `UserIdentifier="` + ann2 + `" Email="ann@example.com"`,
				`Email="BOB@example.com"`, `docs/operations.md`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q:\n%v", want, err)
				}
			}
			if strings.Contains(err.Error(), "carol") {
				t.Errorf("the refusal names a unique Email:\n%v", err)
			}
			if after := schemaOf(t, b, p); !slices.Equal(after, before) {
				t.Errorf("a refused migration changed the partition:\nbefore %v\nafter  %v", before, after)
			}

			// The operator makes the Emails unique (here with the version that made them), and
			// starts again.
			db, err = engine.Open(ctx, b.URL, []string{p}, old)
			if err != nil {
				t.Fatal(err)
			}
			s, _ = db.Store(p)
			if err := s.DB(ctx).Exec(`UPDATE `+s.Table(users)+` SET email = 'ann+2@example.com' WHERE user_identifier = ?`, ann2).Error; err != nil {
				t.Fatal(err)
			}
			if err := s.DB(ctx).Exec(`DELETE FROM ` + s.Table(users) + ` WHERE email = 'BOB@example.com'`).Error; err != nil {
				t.Fatal(err)
			}
			db.Close()
			db, err = engine.Open(ctx, b.URL, []string{p}, reg)
			if err != nil {
				t.Fatalf("start-up once the Emails are unique: %v", err)
			}
			defer db.Close()
			after := schemaOf(t, b, p)
			for _, want := range []string{"index uxf_users_email", "index ix_users_email", "column users.time_zone"} {
				if !slices.Contains(after, want) {
					t.Errorf("after the migration the partition lacks %s: %v", want, after)
				}
			}
			if slices.Contains(after, "index ux_users_email") {
				t.Errorf("the migration kept the exact index it replaces: %v", after)
			}
			s, _ = db.Store(p)
			if _, err := testenv.CreateJSON(ctx, s, reg.MustByName("User"), []byte(`{"Email":"CAROL@example.com"}`), engine.AllOrganizations()); !errors.Is(err, engine.ErrConflict) {
				t.Errorf("create of an Email in another case after the migration: %v, want a conflict", err)
			}
		})
	}
}

// previousRegistry is the built-in descriptors as the version before case-insensitive Emails
// had them: the users' Email unique as stored, and (to show that a refused migration keeps
// nothing) no TimeZone member, which the migration adds before it creates the users' indexes.
func previousRegistry(t *testing.T) *engine.Registry { return exactEmailRegistry(t, true) }

// exactEmailRegistry is the built-in descriptors with the users' Email unique as stored, and
// without the users' TimeZone member if withoutTimeZone.
func exactEmailRegistry(t *testing.T, withoutTimeZone bool) *engine.Registry {
	t.Helper()
	return editedUsersRegistry(t, func(data string) string {
		text := strings.Replace(data, "{fields: [Email], fold: ascii}", "[Email]", 1)
		if withoutTimeZone {
			text = strings.Replace(text, "  - {name: TimeZone, type: string}\n", "", 1)
		}
		if text == data || strings.Contains(text, "fold") || withoutTimeZone && strings.Contains(text, "TimeZone") {
			return ""
		}
		return text
	})
}

// editedUsersRegistry is the built-in descriptors with security/users.yaml as edit returns it;
// edit returns "" when the file no longer reads as the test expects, which fails the test.
func editedUsersRegistry(t *testing.T, edit func(data string) string) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(editedUsers(t, edit))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// editedUsers is the built-in descriptors' files with security/users.yaml as edit returns it
// (see editedUsersRegistry).
func editedUsers(t *testing.T, edit func(data string) string) fstest.MapFS {
	t.Helper()
	files := fstest.MapFS{}
	err := fs.WalkDir(resources.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		data, err := fs.ReadFile(resources.FS, path)
		if path == "security/users.yaml" {
			text := edit(string(data))
			if text == "" {
				t.Fatalf("users.yaml no longer reads as this test expects:\n%s", data)
			}
			data = []byte(text)
		}
		files[path] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// schemaOf lists the users table's indexes ("index name") and columns ("column
// users.name") in partition p of b's database, read apart from the engine.
func schemaOf(t *testing.T, b testenv.Backend, p string) []string {
	t.Helper()
	return catalogStrings(t, b, p,
		`SELECT 'index ' || indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'users'
			UNION ALL SELECT 'column users.' || column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'users'`, []any{p},
		`SELECT 'index ' || name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'users'
			UNION ALL SELECT 'column users.' || name FROM pragma_table_info('users')`, nil)
}

// catalogStrings returns, sorted, the one text column of a catalog query on partition p of
// b's database, read apart from the engine: pg with pgArgs on PostgreSQL, lite with liteArgs
// on SQLite (on the partition's file, waiting for the locks of a start-up that failed and
// closes its database in the background).
func catalogStrings(t *testing.T, b testenv.Backend, p, pg string, pgArgs []any, lite string, liteArgs []any) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	if b.Name == "postgres" {
		conn, err := pgx.Connect(ctx, b.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, _ := conn.Query(ctx, pg, pgArgs...)
		if out, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			t.Fatal(err)
		}
	} else {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(strings.TrimPrefix(b.URL, "sqlite:"), p+".db")+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, lite, liteArgs...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}
