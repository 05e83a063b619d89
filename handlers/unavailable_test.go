package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"credo/engine"
	"credo/handlers"
	"credo/handlers/platform"
	"credo/internal/openapitest"
	"credo/internal/testauth"
	"credo/internal/testenv"
)

// TestConnectionLimitIs503: a PostgreSQL that accepts fewer connections than the pool (here a
// database with CONNECTION LIMIT 3; max_connections refuses with the same SQLSTATE 53300)
// answers requests beyond it with 503, Retry-After and a problem document, never 500; health
// reports the database unavailable right after, and healthy again once it accepts connections.
func TestConnectionLimitIs503(t *testing.T) {
	dbURL := testenv.LimitedDatabase(t, 3)
	reg := registry(t)
	p := testenv.Partition(t)
	db, err := engine.Open(context.Background(), dbURL, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{}}
	srv.Modules = platform.Routes(platform.Config{})
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(openapitest.New(t, srv.OpenAPI()).Handler(h))
	t.Cleanup(ts.Close)
	base := ts.URL + "/v2/" + p + "/"
	create := func(i int) string {
		return fmt.Sprintf(`{"OrganizationIdentifier":"0190a6f0-0000-7000-8000-00000000000a","UserIdentifier":"0190a6f0-0000-7000-8000-00000000000b","CommentCreatedBy":"0190a6f0-0000-7000-8000-00000000000b","CommentText":"c%d"}`, i)
	}
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for g := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				var res *http.Response
				var err error
				if (g+i)%2 == 0 {
					res, err = http.Post(base+"security/users-comments", "application/json", strings.NewReader(create(g*10+i)))
				} else {
					res, err = http.Get(base + "security/users-comments?Take=5")
				}
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				mu.Lock()
				statuses[res.StatusCode]++
				mu.Unlock()
				switch res.StatusCode {
				case http.StatusOK, http.StatusCreated:
				case http.StatusServiceUnavailable:
					var prob struct{ Status int }
					if res.Header.Get("Retry-After") == "" || res.Header.Get("Content-Type") != "application/problem+json" ||
						json.Unmarshal(body, &prob) != nil || prob.Status != 503 {
						t.Errorf("503 without Retry-After or problem document: %v %s", res.Header, body)
					}
				default:
					t.Errorf("over the connection limit: %d %s", res.StatusCode, body)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("statuses: %v", statuses)
	if statuses[http.StatusServiceUnavailable] == 0 {
		t.Fatal("no request was refused: the test did not reach the connection limit")
	}
	health := func() int {
		res, err := http.Get(base + "platform/health")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := health(); st != http.StatusServiceUnavailable {
		t.Errorf("health right after refusals: %d, want 503", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for health() != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("health still 503 10 s after the refusals")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestHealthWhileThePoolIsBusy: 300 concurrent lists keep every connection of the request pool
// busy (4 per SQLite partition, 32 on PostgreSQL) while health checks answer 200: a busy pool
// is not a database that is down.
func TestHealthWhileThePoolIsBusy(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			reg := registry(t)
			p := testenv.Partition(t)
			db, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, _ := db.Store(p)
			testenv.SeedComments(t, s, 2000, 10)
			srv := &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{}}
			srv.Modules = platform.Routes(platform.Config{})
			h, err := srv.Handler()
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(openapitest.New(t, srv.OpenAPI()).Handler(h))
			t.Cleanup(ts.Close)
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 400, MaxIdleConnsPerHost: 400}}
			base := ts.URL + "/v2/" + p + "/"
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 300 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						res, err := client.Get(base + "security/users-comments?Take=1000&Sort=CommentText")
						if err != nil {
							t.Error(err)
							return
						}
						io.Copy(io.Discard, res.Body)
						res.Body.Close()
					}
				}()
			}
			time.Sleep(time.Second) // the lists now queue for the pool
			for range 5 {
				res, err := client.Get(base + "platform/health")
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Errorf("health with the pool busy: %d %s", res.StatusCode, body)
				}
				time.Sleep(200 * time.Millisecond)
			}
			close(stop)
			wg.Wait()
		})
	}
}
