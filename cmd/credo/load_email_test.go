package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/internal/testenv"
)

// TestLoadUsersComparesEmailsIgnoringCase: `credo load --resource User` refuses, as it refuses
// a duplicate, a row whose Email a stored user has in another case and a row repeating an
// earlier row's in another case (the users' unique constraint ignores ASCII case), writing
// nothing; a file of Emails that differ otherwise loads, each as sent (CSV, both stores).
func TestLoadUsersComparesEmailsIgnoringCase(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			load := func(name, content string) (int, string, string) {
				t.Helper()
				file := filepath.Join(dir, name)
				if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				return cli(t, "load", "--database", b.URL, "--partition", p, "--resource", "User", file)
			}
			if code, out, stderr := load("good.csv", "Email,FullName\nAnn@Example.com,Ann\nÉmile@example.com,Émile\némile@example.com,emile\n"); code != 0 || !strings.Contains(out, "loaded 3 User") {
				t.Fatalf("good users: %d %s %s", code, out, stderr)
			}
			code, _, stderr := load("bad.csv", "Email,FullName\nnew@example.com,New\nann@example.COM,Ann again\nNEW@Example.com,New again\n")
			want := []string{
				"row 1: another User already has Email ann@example.COM (stored as Ann@Example.com)",
				"row 2: Email NEW@Example.com repeats row 0",
				"2 problem(s); nothing was written",
			}
			if code != 1 || len(strings.Split(strings.TrimSpace(stderr), "\n")) != len(want) {
				t.Errorf("bad users: exit %d, want 1 and %d lines:\n%s", code, len(want), stderr)
			}
			for _, w := range want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the report does not say %q:\n%s", w, stderr)
				}
			}
			if code, out, stderr := load("again.csv", "Email\nnew@example.com\n"); code != 0 || !strings.Contains(out, "loaded 1 User") {
				t.Errorf("the refused file's first row, alone: %d %s %s (the refused load wrote it)", code, out, stderr)
			}
		})
	}
}
