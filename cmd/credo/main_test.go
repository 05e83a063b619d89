package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"credo/internal/testenv"
)

// cli runs a command line with an empty standard input and returns its exit code, stdout
// and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cliIn(t, "", args...)
}

// cliIn runs a command line with stdin as its standard input.
func cliIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsage(t *testing.T) {
	if code, _, stderr := cli(t); code != 2 || !strings.Contains(stderr, "usage") {
		t.Errorf("no command: %d %q", code, stderr)
	}
	if code, _, stderr := cli(t, "frobnicate"); code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q", code, stderr)
	}
	if code, _, stderr := cli(t, "load", "--partition", "e01", "--resource", "User"); code != 2 || !strings.Contains(stderr, "usage: credo load") {
		t.Errorf("load without a file: %d %q", code, stderr)
	}
	if code, _, stderr := cli(t, "serve", "--v1-partition", "zz"); code != 2 || !strings.Contains(stderr, "not among") {
		t.Errorf("v1 partition outside the partitions: %d %q", code, stderr)
	}
}

func TestOpenAPIListsEveryGroup(t *testing.T) {
	code, out, stderr := cli(t, "openapi", "--descriptors", "../../testdata/descriptors/extra")
	if code != 0 {
		t.Fatalf("openapi: %d %s", code, stderr)
	}
	var doc struct {
		OpenAPI string
		Paths   map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v2/{partition}/security/users-notes", "/v2/{partition}/directory/people/count",
		"/v2/{partition}/security/users-connections/{FromUserIdentifier}/{ToUserIdentifier}", "/v2/{partition}/platform/health",
		"/v2/{partition}/api/plugin/cmds/compliance-summaries"} {
		if doc.Paths[p] == nil {
			t.Errorf("OpenAPI lacks %s", p)
		}
	}
	if _, ok := doc.Paths["/v2/{partition}/directory/people"]["post"]; ok {
		t.Error("OpenAPI offers POST on a read-only group")
	}
}

func TestLoadIsAllOrNothing(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			good := filepath.Join(dir, "users.json")
			os.WriteFile(good, []byte(`[{"Email":"a@example.com","FullName":"A"},{"Email":"b@example.com","FullName":"B","UtcArchived":"2024-03-10T14:30:00.1234567-06:00"}]`), 0o644)
			code, out, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--resource", "User", good)
			if code != 0 || !strings.Contains(out, "loaded 2 User record(s)") {
				t.Fatalf("load JSON: %d %s %s", code, out, stderr)
			}
			csvFile := filepath.Join(dir, "people.csv")
			os.WriteFile(csvFile, []byte("PersonIdentifier,UserIdentifier,OrganizationIdentifier,FullName,IsLearner,CustomKey\n"+
				"0190a6f0-0000-7000-8000-000000000001,0190a6f0-0000-7000-8000-0000000000a1,0190a6f0-0000-7000-8000-0000000000b1,\"Doe, \"\"J\"\"\",true,3\n"+
				"0190a6f0-0000-7000-8000-000000000002,0190a6f0-0000-7000-8000-0000000000a2,0190a6f0-0000-7000-8000-0000000000b1,Roe,notabool,x\n"), 0o644)
			code, _, stderr = cli(t, "load", "--database", b.URL, "--partition", p, "--resource", "directory/people", csvFile)
			if code != 1 || !strings.Contains(stderr, "row 1: IsLearner") || !strings.Contains(stderr, "row 1: CustomKey") {
				t.Fatalf("load CSV with a bad row: %d %s", code, stderr)
			}
			os.WriteFile(csvFile, []byte("PersonIdentifier,UserIdentifier,OrganizationIdentifier,FullName,IsLearner\n"+
				"0190a6f0-0000-7000-8000-000000000001,0190a6f0-0000-7000-8000-0000000000a1,0190a6f0-0000-7000-8000-0000000000b1,\"Doe, \"\"J\"\"\",true\n"), 0o644)
			if code, out, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--resource", "Person", csvFile); code != 0 || !strings.Contains(out, "loaded 1") {
				t.Fatalf("load CSV: %d %s %s", code, out, stderr)
			}
			dup := filepath.Join(dir, "dup.json")
			os.WriteFile(dup, []byte(`[{"Email":"c@example.com"},{"Email":"a@example.com"}]`), 0o644)
			if code, _, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--resource", "User", dup); code != 1 || !strings.Contains(stderr, "Email") {
				t.Fatalf("load with a duplicate Email: %d %s", code, stderr)
			}
			// What the API refuses, load refuses too: instants outside years 1 to 9999 in UTC,
			// U+0000, repeated members and the nil UUID in a required reference.
			for _, bad := range []struct{ name, file, content, member string }{
				{name: "instant after 9999", file: "late.json", content: `[{"Email":"d@example.com","UtcArchived":"9999-12-31T23:00:00-02:00"}]`, member: "UtcArchived"},
				{name: "instant before 0001 in CSV", file: "early.csv", content: "Email,UtcArchived\ne@example.com,0001-01-01T00:30:00+01:00\n", member: "UtcArchived"},
				{name: "NUL", file: "nul.json", content: `[{"Email":"f@example.com","FullName":"a\u0000"}]`, member: "FullName"},
				{name: "repeated member", file: "rep.json", content: `[{"Email":"g@example.com","Email":"h@example.com"}]`, member: "Email"},
				{name: "nil required reference", file: "nil.csv", content: "UserIdentifier,OrganizationIdentifier\n00000000-0000-0000-0000-000000000000,0190a6f0-0000-7000-8000-0000000000b1\n", member: "UserIdentifier"},
			} {
				f := filepath.Join(dir, bad.file)
				os.WriteFile(f, []byte(bad.content), 0o644)
				resource := "User"
				if bad.name == "nil required reference" {
					resource = "Person"
				}
				if code, _, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--resource", resource, f); code != 1 || !strings.Contains(stderr, bad.member) {
					t.Errorf("load with %s: %d %s, want a refusal naming %s", bad.name, code, stderr, bad.member)
				}
			}
			if code, _, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--resource", "Nope", good); code != 1 || !strings.Contains(stderr, "unknown resource") {
				t.Fatalf("unknown resource: %d %s", code, stderr)
			}
		})
	}
}

// serve listens, answers with authentication and the version-1 API wired, and drains on
// cancellation (what SIGTERM does), returning exit code 0.
func TestServeEndToEnd(t *testing.T) {
	data := "sqlite:" + t.TempDir()
	code, out, stderr := cli(t, "secret", "create", "--database", data, "--partition", "e01", "--operator", "--email", "ops@example.com", "--json")
	if code != 0 {
		t.Fatalf("secret create: %d %s", code, stderr)
	}
	var sec struct{ Secret, UserIdentifier, OrganizationIdentifier, Expires string }
	if err := json.Unmarshal([]byte(out), &sec); err != nil || sec.Secret == "" || !strings.HasSuffix(sec.Expires, "+00:00") {
		t.Fatalf("secret create --json: %v %s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database", data}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	addrRe := regexp.MustCompile(`serving http://([0-9.:]+)/`)
	sc := bufio.NewScanner(pr)
	var addr string
	for sc.Scan() {
		if m := addrRe.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if addr == "" {
		t.Fatal("serve did not print its address")
	}
	call := func(method, path, body, bearer string) (int, string) {
		t.Helper()
		return exchange(t, method, "http://"+addr+path, body, bearer)
	}
	if st, _ := call("GET", "/v2/e01/platform/health", "", ""); st != http.StatusOK {
		t.Errorf("health: %d", st)
	}
	if st, _ := call("GET", "/v2/e01/directory/people", "", ""); st != http.StatusUnauthorized {
		t.Errorf("people without a token: %d", st)
	}
	st, body := call("POST", "/v2/e01/security/tokens/generate", `{"Secret":"`+sec.Secret+`","Lifetime":60}`, "")
	var tok struct{ AccessToken, Lifetime string }
	if err := json.Unmarshal([]byte(body), &tok); st != http.StatusOK || err != nil || tok.Lifetime != "60 seconds (~1 minute)" {
		t.Fatalf("tokens/generate: %d %s", st, body)
	}
	if st, body := call("GET", "/v2/e01/directory/people", "", tok.AccessToken); st != http.StatusOK || !strings.Contains(body, `"IsOperator":true`) {
		t.Errorf("people with the token: %d %s", st, body)
	}
	if st, body := call("GET", "/api/events/list-events?date=2030-01-01", "", sec.Secret); st != http.StatusOK {
		t.Errorf("v1 with the raw secret: %d %s", st, body)
	}
	if st, _ := call("GET", "/api/events/list-events?date=2030-01-01", "", ""); st != http.StatusUnauthorized {
		t.Errorf("v1 without a credential: %d", st)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d after cancellation, want 0", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not drain")
	}
	if code, _, stderr := cli(t, "secret", "revoke", "--database", data, "--partition", "e01", sec.Secret); code != 0 {
		t.Errorf("secret revoke: %d %s", code, stderr)
	}
}
