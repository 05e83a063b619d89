package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/internal/testenv"
)

// secretFixture is one partition of a backend that the secret verbs run against.
type secretFixture struct {
	t    *testing.T
	args []string // --database and --partitions/--partition flags
	p    string
	db   string
}

func (f *secretFixture) cli(verb string, args ...string) (int, string, string) {
	f.t.Helper()
	return cli(f.t, append(append([]string{"secret", verb}, f.args...), args...)...)
}

// created is what `secret create --json` prints.
type created struct{ Secret, UserIdentifier, OrganizationIdentifier, Expires string }

func (f *secretFixture) create(args ...string) created {
	f.t.Helper()
	code, out, stderr := f.cli("create", append(args, "--json")...)
	var c created
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil || c.Secret == "" {
		f.t.Fatalf("secret create %v: %d %s %s", args, code, out, stderr)
	}
	return c
}

// listed is one element of `secret list --json`.
type listed struct {
	Identifier, UserIdentifier, OrganizationIdentifier, Created, Expires, Status string
	UserEmail, Revoked                                                           *string
}

func (f *secretFixture) list() ([]listed, string) {
	f.t.Helper()
	code, out, stderr := f.cli("list", "--json")
	var l []listed
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
		f.t.Fatalf("secret list --json: %d %s %s", code, out, stderr)
	}
	return l, out + stderr
}

// plant stores a secret of our choosing for a user (CreateSecret's are random, and one that
// starts with '-' comes once in 64), as CreateSecret stores one: only its hash.
func (f *secretFixture) plant(secret string, c created) string {
	f.t.Helper()
	cfg := testConfig(f.t, f.db, f.p)
	_, db, err := cfg.open(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	st, _ := db.Store(f.p)
	r := st.Registry().MustByName("ClientSecret")
	now := time.Now().UTC()
	body := fmt.Sprintf(`{"SecretHash":%q,"UserIdentifier":%q,"OrganizationIdentifier":%q,"Created":%q,"Expires":%q}`,
		auth.HashSecret(secret), c.UserIdentifier, c.OrganizationIdentifier, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	rec, err := testenv.CreateJSON(context.Background(), st, r, []byte(body), engine.AllOrganizations())
	if err != nil {
		f.t.Fatal(err)
	}
	return rec.Get(r, "SecretIdentifier").(string)
}

// TestSecretCommands runs create, list and revoke through run on both stores: --days is 1 to
// 3650 (0, negative, too large or not a number is a usage error, exit 2, and creates nothing);
// list shows identifiers and never a secret or its hash; revoke takes an identifier, a secret
// after --, or a secret on standard input, also one that starts with '-'; no output, on
// success or error, ever holds a secret.
func TestSecretCommands(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			f := &secretFixture{t: t, args: []string{"--database", b.URL, "--partition", p}, p: p, db: b.URL}

			for _, days := range [][]string{{"--days", "0"}, {"--days=0"}, {"--days", "-1"}, {"--days=-30"}, {"--days", "3651"}, {"--days", "ninety"}, {"--days"}} {
				code, out, stderr := f.cli("create", days...)
				if code != 2 || !strings.Contains(stderr, "--days") || out != "" {
					t.Errorf("create %v: exit %d, stdout %q, stderr %q; want a usage error about --days", days, code, out, stderr)
				}
			}
			if l, _ := f.list(); len(l) != 0 {
				t.Fatalf("refused creates left secrets: %v", l)
			}

			short := f.create("--email", "short@example.com", "--days", "1")
			def := f.create("--email", "ops@example.com", "--operator")
			for c, days := range map[created]int{short: 1, def: 90} {
				exp, err := time.Parse(time.RFC3339, c.Expires)
				if d := time.Until(exp); err != nil || d < time.Duration(days)*24*time.Hour-time.Minute || d > time.Duration(days)*24*time.Hour {
					t.Errorf("%d days: Expires %s (%v)", days, c.Expires, err)
				}
			}
			dash := "-" + strings.Repeat("dA_9", 21) + "x" // base64url, as long as a real one
			dashID := f.plant(dash, def)
			stdinSecret := "stdin" + strings.Repeat("Zz-_", 20) + "0"
			f.plant(stdinSecret, def)
			secrets := []string{short.Secret, def.Secret, dash, stdinSecret}

			var outputs []string // every stdout and stderr below, searched for secrets at the end
			record := func(code int, out, stderr string) (int, string, string) {
				outputs = append(outputs, out, stderr)
				return code, out, stderr
			}
			l, text := f.list()
			outputs = append(outputs, text)
			if len(l) != 4 {
				t.Fatalf("list: %d secrets, want 4: %s", len(l), text)
			}
			byID := map[string]listed{}
			for _, s := range l {
				byID[s.Identifier] = s
				if s.Status != "active" || s.Revoked != nil || s.UserEmail == nil || s.Created == "" || s.Expires == "" || s.OrganizationIdentifier == "" {
					t.Errorf("list item %+v", s)
				}
			}
			if s := byID[dashID]; s.UserIdentifier != def.UserIdentifier || *s.UserEmail != "ops@example.com" {
				t.Errorf("planted secret listed as %+v", s)
			}
			code, table, stderr := record(f.cli("list"))
			if code != 0 || !strings.Contains(table, "IDENTIFIER") || !strings.Contains(table, dashID) || !strings.Contains(table, "short@example.com") {
				t.Errorf("list table: %d %q %q", code, table, stderr)
			}

			// Refused command lines: exit 2, the secret not repeated, nothing revoked.
			for _, args := range [][]string{
				{dash},                     // taken for a flag
				{"--" + dash[1:]},          // likewise
				{"--partition=" + p, dash}, // after another flag
				{dash, "--", dash},
				{"--", dash, "extra"},
				{short.Secret, "--json"},
				{},
			} {
				if code, out, stderr := record(f.cli("revoke", args...)); code != 2 || out != "" || !strings.Contains(stderr, "usage") {
					t.Errorf("revoke %d args: exit %d, stdout %q, stderr %q; want a usage error", len(args), code, out, stderr)
				}
			}
			for _, args := range [][]string{{dash}, {"--operator=" + dash}, {"--email", "x@example.com", dash}} {
				if code, _, _ := record(f.cli("create", args...)); code != 2 {
					t.Errorf("create with a stray secret: exit %d, want 2", code)
				}
			}
			if code, _, _ := record(f.cli("list", "--bogus="+dash)); code != 2 {
				t.Errorf("list with a stray secret: exit %d, want 2", code)
			}
			if code, _, stderr := record(f.cli("revoke", "unknown-secret-value")); code != 1 || !strings.Contains(stderr, "no such secret") {
				t.Errorf("revoke unknown: %d %q", code, stderr)
			}
			if code, _, stderr := record(cliIn(t, "\n", append([]string{"secret", "revoke"}, append(f.args, "-")...)...)); code != 2 || !strings.Contains(stderr, "standard input") {
				t.Errorf("revoke - with nothing on stdin: %d %q", code, stderr)
			}
			if l, _ := f.list(); len(l) != 4 || l[0].Status+l[1].Status+l[2].Status+l[3].Status != "activeactiveactiveactive" {
				t.Fatalf("a refused command revoked something: %v", l)
			}

			// Each way of naming a secret revokes it.
			if code, out, stderr := record(f.cli("revoke", "--", dash)); code != 0 || out != "secret revoked\n" {
				t.Errorf("revoke -- -secret: %d %q %q", code, out, stderr)
			}
			if code, out, stderr := record(cliIn(t, stdinSecret+"\n", append([]string{"secret", "revoke"}, append(f.args, "-")...)...)); code != 0 {
				t.Errorf("revoke - (stdin): %d %q %q", code, out, stderr)
			}
			shortID := ""
			for _, s := range l {
				if s.UserIdentifier == short.UserIdentifier {
					shortID = s.Identifier
				}
			}
			if code, out, stderr := record(f.cli("revoke", shortID)); code != 0 {
				t.Errorf("revoke by identifier: %d %q %q", code, out, stderr)
			}
			if code, _, stderr := record(f.cli("revoke", def.Secret)); code != 0 {
				t.Errorf("revoke by secret: %d %q", code, stderr)
			}
			if code, _, stderr := record(f.cli("revoke", def.Secret)); code != 0 {
				t.Errorf("revoke again: %d %q", code, stderr)
			}
			l, text = f.list()
			outputs = append(outputs, text)
			for _, s := range l {
				if s.Status != "revoked" || s.Revoked == nil {
					t.Errorf("after revoking all: %+v", s)
				}
			}
			if code, out, _ := record(f.cli("create", "-h")); code != 0 || !strings.Contains(out, "--days") {
				t.Errorf("create -h: %d %q", code, out)
			}

			all := strings.Join(outputs, "\n")
			for _, s := range secrets {
				if strings.Contains(all, s) || strings.Contains(all, s[1:]) {
					t.Errorf("a secret appears in the output of list, revoke or a refused command")
				}
				if strings.Contains(all, auth.HashSecret(s)) {
					t.Errorf("a secret's hash appears in the output")
				}
			}
		})
	}
}

// TestSecretCreateJSONMatchesHelp: the members `secret create --json` prints are the ones its
// -h names (decisions §1: Secret, UserIdentifier, OrganizationIdentifier, Expires); the help
// once promised an Identifier that the output does not carry.
func TestSecretCreateJSONMatchesHelp(t *testing.T) {
	_, help, _ := cli(t, "secret", "create", "-h")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			f := &secretFixture{t: t, args: []string{"--database", b.URL, "--partition", p}, p: p, db: b.URL}
			code, out, stderr := f.cli("create", "--email", "help@example.com", "--json")
			var m map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
				t.Fatalf("secret create --json: %d %s %s", code, out, stderr)
			}
			keys := []string{"Secret", "UserIdentifier", "OrganizationIdentifier", "Expires"}
			if len(m) != len(keys) {
				t.Errorf("secret create --json printed %v; want exactly %v", m, keys)
			}
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					t.Errorf("secret create --json lacks %s: %s", k, out)
				}
			}
			if want := "print {" + strings.Join(keys, ", ") + "}"; !strings.Contains(help, want) {
				t.Errorf("secret create -h does not say %q:\n%s", want, help)
			}
		})
	}
}
