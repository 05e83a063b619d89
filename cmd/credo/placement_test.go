package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"credo/internal/testenv"
)

func TestParsePlacements(t *testing.T) {
	tests := []struct {
		env  string
		want placements
		err  string
	}{
		{env: "", want: placements{}},
		{env: "e02=postgres://u:p@db2/credo", want: placements{"e02": "postgres://u:p@db2/credo"}},
		{env: "e02=postgres://db2/credo, e03=postgres://db3/credo", want: placements{"e02": "postgres://db2/credo", "e03": "postgres://db3/credo"}},
		{env: "e02=postgres://db2/credo\ne03=sqlite:/var/credo", want: placements{"e02": "postgres://db2/credo", "e03": "sqlite:/var/credo"}},
		// A multi-host URL keeps its commas, query included.
		{env: "e02=postgres://h1:5432,h2:5432/credo?target_session_attrs=read-write,e03=postgres://db3/x",
			want: placements{"e02": "postgres://h1:5432,h2:5432/credo?target_session_attrs=read-write", "e03": "postgres://db3/x"}},
		{env: "postgres://db2/credo", err: "is not PARTITION=DATABASE"},
		{env: "E02=postgres://db2/credo", err: `partition "E02"`},
		{env: "e02=", err: "is not PARTITION=DATABASE"},
		{env: "e02=mysql://db2", err: "must start with sqlite: or postgres://"},
		{env: "e02=postgres://a/x,e02=postgres://b/x", err: "placed twice"},
	}
	for _, tc := range tests {
		got, err := parsePlacements(tc.env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parsePlacements(%q) error %v, want %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parsePlacements(%q) = %v, %v; want %v", tc.env, got, err, tc.want)
		}
	}
	if s := (placements{"e02": "postgres://u:secret@db2/credo"}).String(); strings.Contains(s, "secret") {
		t.Errorf("String() shows the password: %s", s)
	}
}

// TestPlacementFlags: --partition-database and CREDO_PARTITION_DATABASES put a partition's
// database where they say for load, secret and seed; the flags replace the environment's list;
// a placement of another configured partition is left alone; and a placement that names no
// configured partition, or does not parse, is a usage error before anything is opened.
func TestPlacementFlags(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.json")
	os.WriteFile(users, []byte(`[{"Email":"a@example.com"}]`), 0o644)
	home, placed, other := t.TempDir(), t.TempDir(), t.TempDir()
	exists := func(dir, partition string) bool {
		_, err := os.Stat(filepath.Join(dir, partition+".db"))
		return err == nil
	}

	if code, _, stderr := cli(t, "load", "--database", "sqlite:"+home, "--partition", "e02", "--resource", "User",
		"--partition-database", "e02=sqlite:"+placed, users); code != 0 {
		t.Fatalf("load with --partition-database: %d %s", code, stderr)
	}
	if !exists(placed, "e02") || exists(home, "e02") {
		t.Errorf("load: e02 in the placed folder %v, in --database's %v; want only the placed one", exists(placed, "e02"), exists(home, "e02"))
	}

	// The environment's list, with a placement of another partition that must not be opened
	// (nothing listens on port 1).
	t.Setenv("CREDO_PARTITIONS", "e01,e02,e03")
	t.Setenv("CREDO_PARTITION_DATABASES", "e03=sqlite:"+other+", e01=sqlite:"+placed)
	if code, _, stderr := cli(t, "secret", "create", "--database", "sqlite:"+home, "--partition", "e01", "--json"); code != 0 {
		t.Fatalf("secret create with CREDO_PARTITION_DATABASES: %d %s", code, stderr)
	}
	if !exists(placed, "e01") || exists(home, "e01") || exists(other, "e03") {
		t.Errorf("secret create: e01 placed %v, on --database %v; e03 opened %v", exists(placed, "e01"), exists(home, "e01"), exists(other, "e03"))
	}
	// A flag replaces the environment's list as a whole.
	t.Setenv("CREDO_PARTITION_DATABASES", "e01=sqlite:"+placed+",e03=postgres://nobody@127.0.0.1:1/none")
	if code, _, stderr := cli(t, "seed", "--database", "sqlite:"+home, "--partition", "e03", "--rows", "20",
		"--partition-database", "e03=sqlite:"+other); code != 0 {
		t.Fatalf("seed with --partition-database over the environment: %d %s", code, stderr)
	}
	if !exists(other, "e03") || exists(home, "e03") {
		t.Errorf("seed: e03 in the flag's folder %v, on --database %v", exists(other, "e03"), exists(home, "e03"))
	}

	t.Setenv("CREDO_PARTITION_DATABASES", "")
	t.Setenv("CREDO_PARTITIONS", "e01")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "--database", "sqlite:" + home, "--partition-database", "e09=sqlite:" + placed}, "places e09, not among the partitions (e01)"},
		{[]string{"load", "--database", "sqlite:" + home, "--partition", "e02", "--resource", "User", "--partition-database", "e2=sqlite:" + placed, users}, "places e2, not among the partitions (e01, e02)"},
		{[]string{"serve", "--partition-database", "e01"}, "is not PARTITION=DATABASE"},
		{[]string{"serve", "--partition-database", "e01=sqlite:a", "--partition-database", "e01=sqlite:b"}, "placed twice"},
		{[]string{"serve", "--partition-database", "e01=mysql://u:hidden@db/x"}, "must start with sqlite: or postgres://"},
	} {
		code, _, stderr := cli(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.says) || strings.Contains(stderr, "hidden") {
			t.Errorf("%v: exit %d, %q; want a usage error saying %q", tc.args, code, stderr, tc.says)
		}
	}
	t.Setenv("CREDO_PARTITION_DATABASES", "e01:postgres://u:hidden@db/x")
	if code, _, stderr := cli(t, "serve"); code != 2 || !strings.Contains(stderr, "CREDO_PARTITION_DATABASES") || strings.Contains(stderr, "hidden") {
		t.Errorf("a bad CREDO_PARTITION_DATABASES: exit %d, %q", code, stderr)
	}
	if exists(home, "e01") || exists(home, "e09") {
		t.Error("a refused command opened a partition")
	}
}

// TestServePlaced: serve opens each partition on the database its placement names and
// answers for both.
func TestServePlaced(t *testing.T) {
	home, placed := t.TempDir(), t.TempDir()
	p := startCredo(t, "serve", "--addr", "127.0.0.1:0", "--database", "sqlite:"+home, "--partitions", "e01,e02",
		"--partition-database", "e02=sqlite:"+placed)
	addr := p.waitAddr(t)
	for _, path := range []string{"/readyz", "/v2/e01/platform/health", "/v2/e02/platform/health"} {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", path, res.StatusCode)
		}
	}
	for _, c := range []struct {
		dir, partition string
		want           bool
	}{{home, "e01", true}, {home, "e02", false}, {placed, "e02", true}, {placed, "e01", false}} {
		if _, err := os.Stat(filepath.Join(c.dir, c.partition+".db")); (err == nil) != c.want {
			t.Errorf("%s.db in %s: %v, want %v", c.partition, c.dir, err == nil, c.want)
		}
	}
	if !strings.Contains(p.log(), "e02=sqlite:"+placed) {
		t.Errorf("the start-up line does not name the placement:\n%s", p.log())
	}
}

// TestServeNeedsEveryDatabase: start-up migrates each partition on its own database, so a
// placed database that does not answer stops serve (exit 1) at its timeout, naming that
// partition and its database, its password hidden.
func TestServeNeedsEveryDatabase(t *testing.T) {
	pg := os.Getenv("CREDO_TEST_POSTGRES")
	if pg == "" {
		testenv.Backends(t) // fails under CREDO_REQUIRE_POSTGRES=1
		t.Skip("needs PostgreSQL for the partition that is not placed")
	}
	one, two := testenv.Partition(t), testenv.Partition(t)
	t.Cleanup(func() { dropSchema(t, pg, one) })
	host := silentPostgres(t)
	code, _, stderr := cli(t, "serve", "--addr", "127.0.0.1:0", "--database", pg, "--partitions", one+","+two,
		"--partition-database", two+"=postgres://credo:pw@"+host+"/credo", "--database-timeout", "1s")
	if code != 1 || !strings.Contains(stderr, "partition "+two) || !strings.Contains(stderr, host) || strings.Contains(stderr, ":pw@") {
		t.Errorf("exit %d, stderr %q; want 1 naming partition %s on %s", code, stderr, two, host)
	}
}

// dropSchema removes a partition's schema from the PostgreSQL database at url.
func dropSchema(t *testing.T, url, partition string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{partition}.Sanitize()+" CASCADE"); err != nil {
		t.Error(err)
	}
}
