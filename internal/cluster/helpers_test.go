package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/cluster"
	"credo/internal/testenv"
	"credo/resources"
)

func TestMain(m *testing.M) { cluster.Main(m) }

// extraDescriptors is the folder of the 16th group, which exists only as YAML.
func extraDescriptors(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../testdata/descriptors/extra")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// registry is what the processes load: the built-in descriptors and the extra folder.
func registry(t *testing.T) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS, os.DirFS(extraDescriptors(t)))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// openStore opens the partition in the test process, as `credo load` does, for the records
// the API does not let a client write and for counting what the replicas wrote.
func openStore(t *testing.T, url, partition string, reg *engine.Registry) *engine.Store {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx, url, []string{partition}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st, _ := db.Store(partition)
		st.DB(ctx).Exec(`DROP SCHEMA IF EXISTS "` + partition + `" CASCADE`)
		db.Close()
	})
	st, _ := db.Store(partition)
	return st
}

// secret runs `credo secret create --json` and returns its answer.
func secret(t *testing.T, bin string, env []string, args ...string) struct {
	Secret, UserIdentifier, OrganizationIdentifier string
} {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"secret", "create", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("credo secret create: %v\n%s", err, stderr.String())
	}
	var res struct{ Secret, UserIdentifier, OrganizationIdentifier string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("credo secret create: %v: %s", err, out)
	}
	return res
}

// answer is a response read whole.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	backend string
}

// call sends a request to base+path with a bearer token (when not empty), a JSON body (when
// not empty) and extra header pairs.
func call(t *testing.T, method, url, token, body string, header ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: b, backend: res.Header.Get(cluster.BackendHeader)}
}

// want fails the test unless the status is status, and decodes a JSON answer into v.
func (a answer) want(t *testing.T, what string, status int, v ...any) answer {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, a.status, status, a.body)
	}
	if len(v) > 0 {
		if err := json.Unmarshal(a.body, v[0]); err != nil {
			t.Fatalf("%s: %v: %s", what, err, a.body)
		}
	}
	return a
}

// token gets an access token for a secret.
func token(t *testing.T, base, partition, secret string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"Secret": secret})
	var out struct{ AccessToken string }
	call(t, "POST", base+"/v2/"+partition+"/security/tokens/generate", "", string(body)).want(t, "generate a token", http.StatusOK, &out)
	return out.AccessToken
}

// count counts the records of name whose member equals value, directly in the database.
func count(t *testing.T, st *engine.Store, name, member string, value any) int64 {
	t.Helper()
	r := st.Registry().MustByName(name)
	f, ok := r.Member(member)
	if !ok {
		t.Fatalf("%s has no member %s", name, member)
	}
	var n int64
	if err := st.DB(context.Background()).Table(st.TableName(r)).Where(`"`+f.Column+`" = ?`, value).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// load stores a record through the engine, as credo load does, and returns its members.
func load(t *testing.T, st *engine.Store, name string, members map[string]any) map[string]any {
	t.Helper()
	r := st.Registry().MustByName(name)
	body, _ := json.Marshal(members)
	rec, err := testenv.CreateJSON(context.Background(), st, r, body, engine.AllOrganizations())
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal(engine.AppendJSON(nil, rec, r.Output), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
