package engine_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestUnlinkedFailsClosed: a program that links the engine without its drivers and validator
// (credo/engine/postgres, credo/engine/sqlite, credo/engine/validator) fails at start-up with
// an error naming the package to import, never a panic or a silent no-op: loading a
// descriptor with a validate tag fails with its file and line, opening either store fails
// naming the database, its password hidden.
func TestUnlinkedFailsClosed(t *testing.T) {
	out, err := exec.Command("go", "run", "./testdata/unlinked").CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./testdata/unlinked: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines (load, open sqlite, open postgres), got:\n%s", out)
	}
	for i, want := range []*regexp.Regexp{
		regexp.MustCompile(`^load: descriptor \S+\.yaml:\d+: field \w+: validate "[^"]+": this program links no validator of validate tags: it must import _ "credo/engine/validator"$`),
		regexp.MustCompile(`^open: engine: database "sqlite:\S+" is SQLite, and this program links no SQLite driver: it must import _ "credo/engine/sqlite"$`),
		regexp.MustCompile(`^open: engine: database "postgres://credo:xxxxx@127\.0\.0\.1:1/credo" is PostgreSQL, and this program links no PostgreSQL driver: it must import _ "credo/engine/postgres"$`),
	} {
		if !want.MatchString(lines[i]) {
			t.Errorf("line %d = %q, want it to match %s", i+1, lines[i], want)
		}
	}
}
