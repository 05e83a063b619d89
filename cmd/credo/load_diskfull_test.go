package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"credo/internal/testenv"
)

// TestLoadOnAFullDisk: a load that the database has no space for exits 1 saying what became of
// it (nothing was written), that the disk is full, and the database's cause, in the load's own
// words: nothing of the server's 503 (reads served, retry later). PostgreSQL's disk_full
// (SQLSTATE 53100) is raised by a trigger on the table. SQLite is not run here: its stand-in for
// a full file system, max_page_count, holds only for the connection that sets it, and the
// load opens its own; the engine words SQLITE_FULL with the same reason (engine/dberror.go),
// whose 503 handlers/diskfull_test.go checks on both stores.
func TestLoadOnAFullDisk(t *testing.T) {
	pg := os.Getenv("CREDO_TEST_POSTGRES")
	if pg == "" {
		testenv.Backends(t) // fails under CREDO_REQUIRE_POSTGRES=1
		t.Skip("PostgreSQL not configured")
	}
	ctx := context.Background()
	dir := t.TempDir()
	p := testenv.Partition(t)
	load := func(name, content string) (int, string, string) {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return cli(t, "load", "--database", pg, "--partition", p, "--descriptors", fixtures, "--resource", "Widget", file)
	}
	if code, out, stderr := load("first.json", `[{"WidgetIdentifier":"`+widgetA+`","OrganizationIdentifier":"`+orgOne+`","WidgetCode":"A"}]`); code != 0 {
		t.Fatalf("first load: %d %s %s", code, out, stderr)
	}
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := pgx.Identifier{p}.Sanitize()
	for _, sql := range []string{
		"CREATE FUNCTION " + schema + ".credo_disk_full() RETURNS trigger LANGUAGE plpgsql AS " +
			"$$BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END$$",
		"CREATE TRIGGER credo_disk_full BEFORE INSERT ON " + schema + ".widgets FOR EACH ROW EXECUTE FUNCTION " + schema + ".credo_disk_full()",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	code, _, stderr := load("full.json", `[{"WidgetIdentifier":"`+widgetB+`","OrganizationIdentifier":"`+orgOne+`","WidgetCode":"B"}]`)
	if code != 1 {
		t.Errorf("load on a full disk: exit %d, want 1:\n%s", code, stderr)
	}
	for _, want := range []string{"full.json", "no space left", "is full", "nothing was written", "No space left on device"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the load on a full disk does not say %q:\n%s", want, stderr)
		}
	}
	for _, server := range []string{"reads are served", "retry later"} {
		if strings.Contains(stderr, server) {
			t.Errorf("the load on a full disk says %q, the server's words:\n%s", server, stderr)
		}
	}
}
