package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"credo/internal/testenv"
)

// testConfig is the configuration of a command with --database and --partitions given.
func testConfig(t *testing.T, database, partitions string) *config {
	t.Helper()
	cfg := newConfig()
	cfg.Database, cfg.partitions = database, partitions
	if err := cfg.finish(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestHelpListsOnlyTheVerbsFlags: -h and --help on every command exit 0 and print, on stdout,
// its synopsis and its own flags, never another command's.
func TestHelpListsOnlyTheVerbsFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		synopsis  string
		flags     []string
		notFlags  []string
		mentioned []string
	}{
		{args: []string{"serve"}, synopsis: "credo serve [flags]",
			flags: []string{"addr", "partitions", "v1-partition", "database", "partition-database", "database-timeout", "migration-timeout", "database-max-conns", "descriptors",
				"log-format", "log-level", "admin-addr", "cors-origins", "read-header-timeout", "read-timeout", "write-timeout",
				"idle-timeout", "max-header-bytes", "shutdown-delay", "shutdown-timeout", "rate-limits", "trusted-proxies"},
			notFlags: []string{"partition", "resource", "dry-run", "rows"}, mentioned: []string{"CREDO_DATABASE_TIMEOUT", "CREDO_MIGRATION_TIMEOUT", "CREDO_DATABASE_MAX_CONNS", "exits 3"}},
		{args: []string{"load"}, synopsis: "credo load [flags] FILE",
			flags:    []string{"partition", "resource", "dry-run", "database", "partition-database", "database-timeout", "descriptors"},
			notFlags: []string{"addr", "partitions", "v1-partition", "database-max-conns", "rows"}, mentioned: []string{"row index", "credentials"}},
		{args: []string{"seed"}, synopsis: "credo seed [flags]",
			flags:    []string{"partition", "rows", "seed", "database", "partition-database", "database-timeout"},
			notFlags: []string{"addr", "partitions", "resource", "descriptors"}},
		{args: []string{"openapi"}, synopsis: "credo openapi [flags]", flags: []string{"descriptors"},
			notFlags: []string{"addr", "database", "partition"}},
		{args: []string{"version"}, synopsis: "credo version", notFlags: []string{"addr", "database"}},
		{args: []string{"secret"}, synopsis: "credo secret create|list|revoke", notFlags: []string{"addr"}, mentioned: []string{"create", "list", "revoke"}},
		{args: []string{"secret", "list"}, synopsis: "credo secret list [flags]", flags: []string{"partition", "json", "database"}, notFlags: []string{"email", "addr"}},
		{args: []string{"secret", "create"}, synopsis: "credo secret create [flags]",
			flags: []string{"partition", "email", "organization", "operator", "days", "json", "database", "partition-database"}, notFlags: []string{"addr", "partitions"}},
		{args: []string{"secret", "revoke"}, synopsis: "credo secret revoke [flags] IDENTIFIER | - | -- SECRET",
			flags: []string{"partition", "database"}, notFlags: []string{"email", "addr"}},
	} {
		for _, h := range []string{"-h", "--help"} {
			name := strings.Join(append(tc.args, h), " ")
			code, out, stderr := cli(t, append(tc.args, h)...)
			if code != 0 || stderr != "" || !strings.HasPrefix(out, "usage: "+tc.synopsis) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, stderr)
				continue
			}
			listed := map[string]bool{}
			for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(out, -1) {
				listed[m[1]] = true
			}
			for _, f := range tc.flags {
				if !listed[f] {
					t.Errorf("%s does not list -%s:\n%s", name, f, out)
				}
			}
			for _, f := range tc.notFlags {
				if listed[f] {
					t.Errorf("%s lists -%s, another command's flag:\n%s", name, f, out)
				}
			}
			for _, m := range tc.mentioned {
				if !strings.Contains(out, m) {
					t.Errorf("%s does not mention %q:\n%s", name, m, out)
				}
			}
		}
	}
	if code, out, _ := cli(t, "help", "load"); code != 0 || !strings.HasPrefix(out, "usage: credo load") {
		t.Errorf("help load: %d %q", code, out)
	}
	for _, h := range []string{"-h", "--help", "help"} {
		if code, out, _ := cli(t, h); code != 0 || !strings.Contains(out, "version") || !strings.Contains(out, "Exit status") {
			t.Errorf("credo %s: %d %q", h, code, out)
		}
	}
}

// TestVersion: credo version and credo --version print the version, module, commit and Go.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, out, stderr := cli(t, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: %d %q", args, code, stderr)
		}
		for _, want := range []string{"credo v", "\nmodule: credo", "\ncommit: ", "\ngo:     go1."} {
			if !strings.Contains(out, want) {
				t.Errorf("%v does not say %q:\n%s", args, want, out)
			}
		}
	}
	if code, _, _ := cli(t, "version", "extra"); code != 2 {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
}

// TestExitCodes: usage errors exit 2, runtime errors 1.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "users.json")
	os.WriteFile(good, []byte(`[]`), 0o644)
	data := "sqlite:" + t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{args: []string{"serve", "--no-such-flag"}, code: 2, says: "flag provided but not defined"},
		{args: []string{"serve", "--database-timeout", "soon"}, code: 2, says: "database-timeout"},
		{args: []string{"serve", "--database-timeout", "-1s"}, code: 2, says: "database-timeout: must be at least 1s"},
		// A unit left out, or a zero, is refused by the flag as by its CREDO_* twin, not taken
		// for the default.
		{args: []string{"serve", "--database-timeout", "10"}, code: 2, says: "database-timeout: is not a duration such as 10s"},
		{args: []string{"serve", "--migration-timeout", "0"}, code: 2, says: "migration-timeout: must be at least 1s: 0 would mean no limit"},
		// Below a millisecond the database would get 0 (no limit) as its busy_timeout or
		// lock_timeout; below a second no request could count on it. (--admin-addr is wrong too
		// so that a serve that took it would stop, not serve.)
		{args: []string{"serve", "--database-timeout", "500us", "--admin-addr", "nonsense"}, code: 2, says: "database-timeout: must be at least 1s"},
		{args: []string{"serve", "--database-max-conns", "0"}, code: 2, says: "database-max-conns: is not a positive number"},
		{args: []string{"serve", "--database-max-conns", "-3"}, code: 2, says: "database-max-conns: is not a positive number"},
		{args: []string{"serve", "extra"}, code: 2, says: "wrong number of arguments"},
		{args: []string{"serve", "--rate-limits", "credentials=lots"}, code: 2, says: "N/s, N/m, N/h"},
		{args: []string{"serve", "--trusted-proxies", "not-an-address"}, code: 2, says: "not-an-address"},
		{args: []string{"load", "--database", data, "--partition", "e01", good}, code: 2, says: "--resource is required"},
		{args: []string{"load", "--database", data, "--partition", "e01", "--resource", "User"}, code: 2, says: "usage: credo load"},
		{args: []string{"seed", "--database", data, "--partition", "e01", "--rows", "2"}, code: 2, says: "--rows must be at least 3"},
		{args: []string{"seed", "--database", data, "--partition", "e01", "--partition-database", "e01=postgres://127.0.0.1:1/x"}, code: 2, says: "SQLite and PostgreSQL at once"},
		{args: []string{"secret"}, code: 2, says: "create, list or revoke"},
		{args: []string{"secret", "rotate"}, code: 2, says: "unknown command"},
		{args: []string{"secret", "revoke", "--database", data, "--partition", "e01"}, code: 2, says: "usage: credo secret revoke"},
		{args: []string{"load", "--database", data, "--partition", "e01", "--resource", "User", filepath.Join(dir, "missing.json")}, code: 1, says: "no such file"},
		{args: []string{"load", "--database", data, "--partition", "e01", "--resource", "Nope", good}, code: 1, says: "unknown resource"},
		{args: []string{"load", "--database", "mysql://x", "--partition", "e01", "--resource", "User", good}, code: 1, says: "must start with sqlite: or postgres://"},
		// A keyword/value connection string is refused without its password.
		{args: []string{"serve", "--database", "host=db user=credo password=hidden-pw dbname=credo"}, code: 1, says: "password=xxxxx"},
	} {
		code, _, stderr := cli(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.says) || strings.Contains(stderr, "hidden-pw") {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", tc.args, code, stderr, tc.code, tc.says)
		}
	}
	t.Setenv("CREDO_DATABASE_TIMEOUT", "ten seconds")
	if code, _, stderr := cli(t, "serve"); code != 2 || !strings.Contains(stderr, "CREDO_DATABASE_TIMEOUT") {
		t.Errorf("a bad CREDO_DATABASE_TIMEOUT: %d %q", code, stderr)
	}
	t.Setenv("CREDO_DATABASE_TIMEOUT", "0")
	if code, _, stderr := cli(t, "serve"); code != 2 || !strings.Contains(stderr, `CREDO_DATABASE_TIMEOUT="0" must be at least 1s`) {
		t.Errorf("a zero CREDO_DATABASE_TIMEOUT: %d %q", code, stderr)
	}
	t.Setenv("CREDO_DATABASE_TIMEOUT", "")
	t.Setenv("CREDO_MIGRATION_TIMEOUT", "an hour")
	if code, _, stderr := cli(t, "serve"); code != 2 || !strings.Contains(stderr, "CREDO_MIGRATION_TIMEOUT") {
		t.Errorf("a bad CREDO_MIGRATION_TIMEOUT: %d %q", code, stderr)
	}
	t.Setenv("CREDO_MIGRATION_TIMEOUT", "")
	// A malformed key is a usage error found before any database is opened or migrated.
	for name, value := range map[string]string{"CREDO_COOKIE_KEY": "not base64 of 32 bytes", "CREDO_SIGNING_KEY": "short"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv(name, value)
			if code, _, stderr := cli(t, "serve", "--database", "sqlite:"+dir, "--partitions", "e01", "--addr", "127.0.0.1:0"); code != 2 || !strings.Contains(stderr, name) {
				t.Errorf("a bad %s: exit %d, stderr %q; want 2 naming it", name, code, stderr)
			}
			if files, _ := os.ReadDir(dir); len(files) != 0 {
				t.Errorf("a bad %s: the database was opened before the key was checked (%d files)", name, len(files))
			}
		})
	}
}

// TestPartitionDefault: --partition may be omitted when CREDO_PARTITIONS names one partition,
// and is a usage error when it names several.
func TestPartitionDefault(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.json")
	os.WriteFile(file, []byte(`[{"Email":"a@example.com"}]`), 0o644)
	p := testenv.Partition(t)
	data := "sqlite:" + t.TempDir()
	t.Setenv("CREDO_PARTITIONS", p)
	if code, out, stderr := cli(t, "load", "--database", data, "--resource", "User", file); code != 0 || !strings.Contains(out, "into "+p) {
		t.Fatalf("load without --partition, one configured: %d %q %q", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimPrefix(data, "sqlite:"), p+".db")); err != nil {
		t.Errorf("the partition's database was not created: %v", err)
	}
	t.Setenv("CREDO_PARTITIONS", "e01,e02")
	if code, _, stderr := cli(t, "load", "--database", data, "--resource", "User", file); code != 2 || !strings.Contains(stderr, "--partition is required") {
		t.Errorf("load without --partition, two configured: %d %q", code, stderr)
	}
}

// TestREADMEListsEveryServeFlag: the README's configuration table has a row for every flag
// that credo serve -h lists, with the environment twin the flag's help names.
func TestREADMEListsEveryServeFlag(t *testing.T) {
	code, out, _ := cli(t, "serve", "-h")
	if code != 0 {
		t.Fatalf("serve -h: %d", code)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flags := regexp.MustCompile(`(?m)^  -([a-z0-9-]+).*\n\s+.*?\((CREDO_[A-Z0-9_]+)`).FindAllStringSubmatch(out, -1)
	if len(flags) < 20 {
		t.Fatalf("found %d flags with an environment twin in serve -h:\n%s", len(flags), out)
	}
	for _, f := range flags {
		if row := "| `--" + f[1] + "` | `" + f[2] + "` |"; !strings.Contains(string(readme), row) {
			t.Errorf("README's configuration table lacks %s", row)
		}
	}
}
