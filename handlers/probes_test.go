package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"credo/engine"
	"credo/handlers"
	"credo/internal/testauth"
	"credo/internal/testenv"
)

// readiness reads a /readyz answer.
func readiness(t *testing.T, r response) handlers.Readiness {
	t.Helper()
	var out handlers.Readiness
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("readyz body: %v: %s", err, r.body)
	}
	return out
}

// TestProbes: /livez answers while the process serves; /readyz is 200 when every partition is
// migrated and reachable, 503 naming a partition that lost a table until it is migrated again,
// and 503 "Draining" once shutdown began. Neither needs a credential. The partition's health
// (an API operation, unlike the probes) agrees while the database answers.
func TestProbes(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := newObserved(t, b.URL)
			o.get(t, "/v2/{p}/platform/health").expect(t, "health", http.StatusOK)
			o.get(t, "/livez").expect(t, "livez", http.StatusOK)
			o.send(t, http.MethodHead, "/readyz").expect(t, "HEAD readyz", http.StatusOK)
			ok := readiness(t, o.get(t, "/readyz").expect(t, "readyz", http.StatusOK))
			if ok.Status != "Ready" || ok.Partitions[o.partition] != "ok" {
				t.Errorf("ready: %+v", ok)
			}
			users := o.store.Registry().MustByName("User")
			if err := o.store.DB(context.Background()).Exec("DROP TABLE " + o.store.Table(users)).Error; err != nil {
				t.Fatal(err)
			}
			bad := readiness(t, o.get(t, "/readyz").expect(t, "readyz without a table", http.StatusServiceUnavailable))
			if bad.Status != "NotReady" || bad.Partitions[o.partition] != "not migrated" {
				t.Errorf("not migrated: %+v", bad)
			}
			if err := o.store.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			o.get(t, "/readyz").expect(t, "readyz after migrating", http.StatusOK)
			o.send(t, http.MethodPost, "/readyz").expect(t, "POST readyz", http.StatusMethodNotAllowed)
			o.srv.Drain()
			if d := readiness(t, o.get(t, "/readyz").expect(t, "readyz draining", http.StatusServiceUnavailable)); d.Status != "Draining" {
				t.Errorf("draining: %+v", d)
			}
			o.get(t, "/livez").expect(t, "livez draining", http.StatusOK)
		})
	}
}

// TestReadyzDrainingAnswersAtOnce: once shutdown began, /readyz answers 503 "Draining" without
// checking the partitions, so that a database that hangs cannot hold the answer past a load
// balancer's probe timeout during --shutdown-delay: with PostgreSQL frozen, a check takes
// handlers.ProbeTimeout, and the prober here gives up at half of it.
func TestReadyzDrainingAnswersAtOnce(t *testing.T) {
	o, px := observedBehindProxy(t)
	o.get(t, "/v2/{p}/platform/health").expect(t, "health", http.StatusOK)
	o.get(t, "/readyz").expect(t, "readyz", http.StatusOK)
	px.Freeze()
	t.Cleanup(px.Thaw)
	o.srv.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), handlers.ProbeTimeout/2)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.URL+"/readyz", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := o.Client().Do(req)
	if err != nil {
		t.Fatalf("/readyz while draining with the database frozen: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var got handlers.Readiness
	if res.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(body, &got) != nil || got.Status != "Draining" {
		t.Errorf("/readyz while draining: %d %s; want 503 Draining", res.StatusCode, body)
	}
}

// TestReadyzFollowsTheDatabase: with PostgreSQL behind a proxy that stops forwarding, /readyz
// answers 503 naming the partition as unreachable within the probe timeout, the requests that
// need the database fail with 5xx while the log stays bounded, and /readyz is 200 again once
// the database is back, without a restart.
func TestReadyzFollowsTheDatabase(t *testing.T) {
	o, px := observedBehindProxy(t)
	o.get(t, "/readyz").expect(t, "readyz", http.StatusOK)

	px.Down()
	start := time.Now()
	down := readiness(t, o.get(t, "/readyz").expect(t, "readyz, database down", http.StatusServiceUnavailable))
	if down.Partitions[o.partition] != "unreachable" {
		t.Errorf("down: %+v", down)
	}
	if took := time.Since(start); took > handlers.ProbeTimeout+time.Second {
		t.Errorf("readyz took %s with the database down", took)
	}
	const n = 300
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for range n / 6 {
				// 503, never 500: a pooled connection the proxy cut is a lost database too.
				if res := o.get(t, "/v2/{p}/security/users", "Authorization", "Bearer good"); res.status != http.StatusServiceUnavailable {
					t.Errorf("list with the database down: %d %s", res.status, res.body)
				}
			}
		})
	}
	wg.Wait()
	lines := 0
	for _, m := range o.log.records(t) {
		if m["msg"] != "request" {
			lines++
		}
	}
	t.Logf("%d log lines besides access lines for %d failing requests", lines, n)
	if lines > 25 {
		t.Errorf("%d log lines besides access lines for %d failing requests:\n%s", lines, n, o.log.String())
	}

	px.Up(t)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		res := o.get(t, "/readyz")
		if res.status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz after the database came back: %d %s", res.status, res.body)
		}
	}
	o.get(t, "/v2/{p}/security/users", "Authorization", "Bearer good").expect(t, "list after the database came back", http.StatusOK)
}

// TestReadyzPerPartition: with two partitions, /readyz stays 200 "Degraded" while one of them
// is not ready, naming each one's state, and is 503 "NotReady" only when none is;
// /readyz?partition=P answers for P alone. An unknown partition is 404, another parameter
// 400; draining makes every form 503.
func TestReadyzPerPartition(t *testing.T) {
	reg := registry(t)
	ctx := context.Background()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			one, two := testenv.Partition(t), testenv.Partition(t)
			db, err := engine.Open(ctx, b.URL, []string{one, two}, reg)
			if err != nil {
				t.Fatal(err)
			}
			st1, _ := db.Store(one)
			st2, _ := db.Store(two)
			t.Cleanup(func() {
				if db.Dialect == engine.Postgres {
					st1.DB(ctx).Exec(`DROP SCHEMA IF EXISTS "` + one + `" CASCADE`)
					st1.DB(ctx).Exec(`DROP SCHEMA IF EXISTS "` + two + `" CASCADE`)
				}
				db.Close()
			})
			srv := &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{}}
			h, err := srv.Handler()
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			t.Cleanup(ts.Close)
			probe := func(query string, status int, want handlers.Readiness) {
				t.Helper()
				res, err := http.Get(ts.URL + "/readyz" + query)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				body, _ := io.ReadAll(res.Body)
				var got handlers.Readiness
				if res.StatusCode != status || json.Unmarshal(body, &got) != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("/readyz%s: %d %s; want %d %+v", query, res.StatusCode, body, status, want)
				}
			}
			ready := func(states ...string) map[string]string {
				m := map[string]string{}
				for i := 0; i+1 < len(states); i += 2 {
					m[states[i]] = states[i+1]
				}
				return m
			}
			probe("", http.StatusOK, handlers.Readiness{Status: "Ready", Partitions: ready(one, "ok", two, "ok")})
			probe("?partition="+two, http.StatusOK, handlers.Readiness{Status: "Ready", Partitions: ready(two, "ok")})

			users := reg.MustByName("User")
			if err := st2.DB(ctx).Exec("DROP TABLE " + st2.Table(users)).Error; err != nil {
				t.Fatal(err)
			}
			probe("", http.StatusOK, handlers.Readiness{Status: "Degraded", Partitions: ready(one, "ok", two, "not migrated")})
			probe("?partition="+one, http.StatusOK, handlers.Readiness{Status: "Ready", Partitions: ready(one, "ok")})
			probe("?partition="+two, http.StatusServiceUnavailable, handlers.Readiness{Status: "NotReady", Partitions: ready(two, "not migrated")})

			if err := st1.DB(ctx).Exec("DROP TABLE " + st1.Table(users)).Error; err != nil {
				t.Fatal(err)
			}
			probe("", http.StatusServiceUnavailable, handlers.Readiness{Status: "NotReady", Partitions: ready(one, "not migrated", two, "not migrated")})
			for _, st := range []*engine.Store{st1, st2} {
				if err := st.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
			}
			probe("", http.StatusOK, handlers.Readiness{Status: "Ready", Partitions: ready(one, "ok", two, "ok")})

			for _, c := range []struct {
				query  string
				status int
				says   string
			}{
				{"?partition=nope", http.StatusNotFound, "nope"},
				{"?partition=", http.StatusBadRequest, "one partition"},
				{"?partition=" + one + "&partition=" + two, http.StatusBadRequest, "one partition"},
				{"?verbose=1", http.StatusBadRequest, "verbose"},
			} {
				res, err := http.Get(ts.URL + "/readyz" + c.query)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != c.status || res.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(body), c.says) {
					t.Errorf("/readyz%s: %d %s %s; want a %d problem saying %s", c.query, res.StatusCode, res.Header.Get("Content-Type"), body, c.status, c.says)
				}
			}

			srv.Drain()
			probe("", http.StatusServiceUnavailable, handlers.Readiness{Status: "Draining", Partitions: ready()})
			probe("?partition="+one, http.StatusServiceUnavailable, handlers.Readiness{Status: "Draining", Partitions: ready()})
		})
	}
}

// observedBehindProxy serves the observed test server on PostgreSQL through a proxy the test
// can freeze or cut; it skips without PostgreSQL (SQLite has no database to lose) unless
// PostgreSQL is required.
func observedBehindProxy(t *testing.T) (*observed, *testenv.Proxy) {
	t.Helper()
	pg := os.Getenv("CREDO_TEST_POSTGRES")
	if pg == "" {
		testenv.Backends(t) // fails under CREDO_REQUIRE_POSTGRES=1
		t.Skip("needs PostgreSQL: SQLite has no database to lose")
	}
	proxied, px := testenv.ProxyURL(t, pg)
	return newObserved(t, proxied), px
}
