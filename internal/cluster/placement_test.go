package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"credo/engine"
	"credo/handlers"
	"credo/handlers/platform"
	"credo/internal/cluster"
	"credo/internal/testenv"
)

// TestPlacedPartitions runs `credo serve` with one partition on the test database and another
// on a second PostgreSQL database, reached through a TCP proxy that the test takes down and
// brings back. Each partition's rows are on its own database and nowhere else; a token and a
// record of one partition mean nothing in the other; with the second database down only its
// partition's health and readiness fail (the process stays ready, Degraded) while the first
// partition keeps serving; and the second partition recovers when its database is back,
// without a restart.
func TestPlacedPartitions(t *testing.T) {
	first := testenv.Postgres(t)
	second := testenv.SecondPostgres(t)
	proxied, px := testenv.ProxyURL(t, second)
	bin := cluster.Binary(t)
	one, two := testenv.Partition(t), testenv.Partition(t)
	t.Cleanup(func() {
		for _, url := range []string{first, second} {
			dropSchemas(t, url, one, two)
		}
	})
	env := []string{"CREDO_DATABASE=" + first, "CREDO_PARTITIONS=" + one + "," + two}
	// serve takes the placement as a flag, secret from the environment: both twins are used.
	proc := cluster.Start(t, bin, env, "--partition-database", two+"="+proxied, "--admin-addr", "127.0.0.1:0")
	base := proc.URL()
	ops := [2]string{}
	tokens := [2]string{}
	for i, p := range []string{one, two} {
		op := secret(t, bin, append(env, "CREDO_PARTITION_DATABASES="+two+"="+proxied), "--partition", p, "--operator")
		ops[i] = op.UserIdentifier
		tokens[i] = token(t, base, p, op.Secret)
	}
	comments := func(p string) string { return base + "/v2/" + p + "/security/users-comments" }
	comment := func(i int, p, text string) string {
		t.Helper()
		body := fmt.Sprintf(`{"UserIdentifier":%q,"OrganizationIdentifier":%q,"CommentCreatedBy":%q,"CommentText":%q}`,
			ops[i], uuid.NewString(), ops[i], text)
		var c struct{ CommentIdentifier string }
		call(t, "POST", comments(p), tokens[i], body).want(t, "comment in "+p, http.StatusCreated, &c)
		return c.CommentIdentifier
	}

	c1, c2 := comment(0, one, "on the first database"), comment(1, two, "on the second database")

	t.Run("data lands where configured", func(t *testing.T) {
		for _, c := range []struct {
			url, partition, id string
			want               bool
		}{{first, one, c1, true}, {second, two, c2, true}, {first, two, c2, false}, {second, one, c1, false}} {
			if got := commentStored(t, c.url, c.partition, c.id); got != c.want {
				t.Errorf("partition %s's comment on %s: %v, want %v", c.partition, engine.Redact(c.url), got, c.want)
			}
		}
	})

	t.Run("isolation", func(t *testing.T) {
		call(t, "GET", comments(two), tokens[0], "").want(t, one+"'s token on "+two, http.StatusUnauthorized)
		call(t, "GET", comments(one), tokens[1], "").want(t, two+"'s token on "+one, http.StatusUnauthorized)
		call(t, "GET", comments(two)+"/"+c1, tokens[1], "").want(t, one+"'s comment asked of "+two, http.StatusNotFound)
		call(t, "GET", comments(one)+"/"+c2, tokens[0], "").want(t, two+"'s comment asked of "+one, http.StatusNotFound)
		for i, p := range []string{one, two} {
			var list []struct{ CommentIdentifier string }
			call(t, "GET", comments(p)+"?Take=100", tokens[i], "").want(t, "list "+p, http.StatusOK, &list)
			want := []string{c1, c2}[i]
			if len(list) != 1 || list[0].CommentIdentifier != want {
				t.Errorf("%s lists %v, want only %s", p, list, want)
			}
		}
	})

	t.Run("a pool per database", func(t *testing.T) {
		m := regexp.MustCompile(`msg="credo admin listening" addr=(\S+)`).FindStringSubmatch(proc.Log())
		if m == nil {
			t.Fatalf("no admin address in the log:\n%s", proc.Log())
		}
		metrics := string(call(t, "GET", "http://"+m[1]+"/metrics", "", "").want(t, "metrics", http.StatusOK).body)
		for _, p := range []string{one, two} {
			if want := `credo_db_pool_max_connections{pool="postgres:` + p + `"} 32`; !strings.Contains(metrics, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})

	t.Run("one database down", func(t *testing.T) {
		px.Down()
		down := time.Now()
		health(t, base, two, http.StatusServiceUnavailable, "unreachable")
		health(t, base, one, http.StatusOK, "ok")
		readyz(t, base, "", http.StatusOK, handlers.Readiness{Status: "Degraded", Partitions: map[string]string{one: "ok", two: "unreachable"}})
		readyz(t, base, "?partition="+two, http.StatusServiceUnavailable, handlers.Readiness{Status: "NotReady", Partitions: map[string]string{two: "unreachable"}})
		readyz(t, base, "?partition="+one, http.StatusOK, handlers.Readiness{Status: "Ready", Partitions: map[string]string{one: "ok"}})
		if took := time.Since(down); took > 5*time.Second {
			t.Errorf("the probes took %v with the second database down", took)
		}
		c3 := comment(0, one, "while the second database is down")
		call(t, "GET", comments(one)+"/"+c3, tokens[0], "").want(t, "read "+one+" while "+two+" is down", http.StatusOK)
		res := call(t, "GET", comments(two), tokens[1], "")
		if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
			t.Errorf("a request to %s with its database down: %d (Retry-After %q) %s; want 503 with Retry-After",
				two, res.status, res.header.Get("Retry-After"), res.body)
		}
		if !commentStored(t, first, one, c3) {
			t.Errorf("the comment written while %s was down is not on the first database", two)
		}
	})

	t.Run("the database comes back", func(t *testing.T) {
		px.Up(t)
		back := time.Now()
		for {
			var r handlers.Readiness
			res := call(t, "GET", base+"/readyz", "", "")
			if res.status == http.StatusOK && json.Unmarshal(res.body, &r) == nil && r.Status == "Ready" {
				break
			}
			if time.Since(back) > 15*time.Second {
				t.Fatalf("/readyz 15 s after the database came back: %d %s", res.status, res.body)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("ready again %v after the database came back", time.Since(back).Round(time.Millisecond))
		health(t, base, two, http.StatusOK, "ok")
		c4 := comment(1, two, "after the second database came back")
		if !commentStored(t, second, two, c4) {
			t.Errorf("the comment written after the recovery is not on the second database")
		}
	})
}

// health checks a partition's platform/health.
func health(t *testing.T, base, partition string, status int, database string) {
	t.Helper()
	var h platform.Health
	call(t, "GET", base+"/v2/"+partition+"/platform/health", "", "").want(t, partition+" health", status, &h)
	if h.Database != database || h.Env.Slug != partition {
		t.Errorf("%s health: %+v, want Database %q", partition, h, database)
	}
}

// readyz checks a /readyz answer.
func readyz(t *testing.T, base, query string, status int, want handlers.Readiness) {
	t.Helper()
	var got handlers.Readiness
	call(t, "GET", base+"/readyz"+query, "", "").want(t, "/readyz"+query, status, &got)
	if got.Status != want.Status || fmt.Sprint(got.Partitions) != fmt.Sprint(want.Partitions) {
		t.Errorf("/readyz%s: %+v, want %+v", query, got, want)
	}
}

// commentStored asks the database at url directly whether the partition's schema there holds
// the comment; a database without the partition's schema does not.
func commentStored(t *testing.T, url, partition, id string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var schema bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM information_schema.schemata WHERE schema_name = $1)", partition).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if !schema {
		return false
	}
	var n int
	q := "SELECT count(*) FROM " + pgx.Identifier{partition, "user_comments"}.Sanitize() + " WHERE comment_identifier = $1"
	if err := conn.QueryRow(ctx, q, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// dropSchemas removes the partitions' schemas from the database at url.
func dropSchemas(t *testing.T, url string, partitions ...string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	for _, p := range partitions {
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{p}.Sanitize()+" CASCADE"); err != nil {
			t.Error(err)
		}
	}
}
