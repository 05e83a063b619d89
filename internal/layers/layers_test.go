package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// deps lists, per package of a pattern, its non-test imports: all of them (transitive) or
// only its own (direct).
func deps(t *testing.T, pattern string, direct bool) map[string][]string {
	t.Helper()
	field := "Deps"
	if direct {
		field = "Imports"
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .`+field+`}} {{.}}{{end}}`, pattern).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pattern, err, out)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	return m
}

// TestDependencyRule keeps the layers of STYLE.md apart: the engine knows nothing of HTTP
// (not even its query strings), handlers nothing of GORM, validation or YAML, auth nothing of
// resources, only cmd/credo imports legacy, and resources only embeds. A forbidden package
// forbids its subpackages too.
func TestDependencyRule(t *testing.T) {
	// handlers and auth call the engine, which uses GORM: their rules are about their own imports.
	rules := []struct {
		pkg       string
		direct    bool
		forbidden []string
	}{
		// HTTP parameters are parsed at the edge (handlers/request) into typed queries: the
		// engine imports no net/url, not even through a library. The libraries that do (pgx,
		// GORM's PostgreSQL dialector, the SQLite driver, the validator, crypto/x509) are
		// linked by the programs through the subpackages below, behind engine/backend.
		{pkg: "credo/engine", forbidden: []string{"net/url", "net/http", "github.com/gorilla/mux", "credo/auth", "credo/handlers", "credo/legacy"}},
		{pkg: "credo/engine/...", forbidden: []string{"net/http", "github.com/gorilla/mux", "credo/auth", "credo/handlers", "credo/legacy"}},
		{pkg: "credo/handlers/...", direct: true, forbidden: []string{"gorm.io/gorm", "github.com/go-playground/validator/v10", "gopkg.in/yaml.v3", "credo/legacy"}},
		{pkg: "credo/auth/...", direct: true, forbidden: []string{"credo/engine", "credo/resources", "credo/handlers", "credo/legacy", "gorm.io/gorm", "gopkg.in/yaml.v3"}},
		{pkg: "credo/auth/...", forbidden: []string{"credo/engine", "credo/resources", "credo/handlers"}},
		{pkg: "credo/resources", forbidden: []string{"credo/engine", "gopkg.in/yaml.v3"}},
	}
	for _, rule := range rules {
		for pkg, ds := range deps(t, rule.pkg, rule.direct) {
			for _, d := range ds {
				for _, bad := range rule.forbidden {
					if d == bad || strings.HasPrefix(d, bad+"/") {
						t.Errorf("%s imports %s (directly or not), which its layer forbids", pkg, bad)
					}
				}
			}
		}
	}
	for pkg, ds := range deps(t, "credo/...", false) {
		for _, d := range ds {
			// The allow-all authenticator and authorizer of the tests must never be wired
			// into a program (fail closed, STYLE.md 23).
			if d == "credo/internal/testauth" {
				t.Errorf("%s imports credo/internal/testauth; only test files may", pkg)
			}
		}
		if pkg == "credo/cmd/credo" || strings.HasPrefix(pkg, "credo/legacy") || strings.HasPrefix(pkg, "credo/bench") {
			continue
		}
		for _, d := range ds {
			if d == "credo/legacy" {
				t.Errorf("%s imports credo/legacy; only cmd/credo may", pkg)
			}
		}
	}
}
