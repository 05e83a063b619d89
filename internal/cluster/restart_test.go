package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/internal/cluster"
	"credo/internal/testenv"
)

// TestRollingRestart restarts two replicas one at a time, twice each, behind the proxy, while
// writers create records and readers list them without pause: SIGTERM; the replica's /readyz
// answers 503 Draining while it still serves; the proxy's probe takes it out of rotation; it
// drains and exits 0; it starts again on the same address and the next one stops only once
// the proxy sees it ready. Every write the API acknowledged is in the database afterwards, and
// no request was answered with a 5xx or failed without an answer. The proxy retries on the
// other replica only a request whose connection was refused (never sent: Retried); net/http's
// transport under it re-sends by itself a request whose kept-alive connection was found closed
// before the request was written, or a GET that got no byte of an answer (Resent). Both are
// logged; neither ever re-sends a POST that a replica may have received.
func TestRollingRestart(t *testing.T) {
	url := testenv.Postgres(t)
	bin := cluster.Binary(t)
	reg := registry(t)
	p := testenv.Partition(t)
	// SIGTERM: /readyz answers 503 for the shutdown delay, long enough for the proxy's probe
	// (every 100 ms) to take the replica out of its rotation, then the listener closes and
	// in-flight requests finish.
	env := []string{"CREDO_DATABASE=" + url, "CREDO_PARTITIONS=" + p, "CREDO_SHUTDOWN_DELAY=500ms"}
	procs := cluster.StartAll(t, 2, bin, env)
	proxy := cluster.NewProxy(t, "/readyz", procs[0].URL(), procs[1].URL())
	st := openStore(t, url, p, reg)
	op := secret(t, bin, env, "--partition", p, "--operator")
	tok := token(t, proxy.URL, p, op.Secret)
	comments := proxy.URL + "/v2/" + p + "/security/users-comments"

	const writers, readers = 6, 2
	var (
		ctx, stop = context.WithCancel(context.Background())
		wg        sync.WaitGroup
		mu        sync.Mutex
		acked     []string
		statuses  = map[int]int{}
		failures  []string
		requests  atomic.Int64
	)
	record := func(status int, detail string) {
		mu.Lock()
		defer mu.Unlock()
		statuses[status]++
		if status >= 500 && len(failures) < 10 {
			failures = append(failures, detail)
		}
	}
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(method, url, body string) (int, []byte, error) {
		req, _ := http.NewRequest(method, url, nil)
		if body != "" {
			req, _ = http.NewRequest(method, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, b, err
	}
	user, org := uuid.NewString(), uuid.NewString()
	for range writers {
		wg.Go(func() {
			for ctx.Err() == nil {
				body := fmt.Sprintf(`{"UserIdentifier":%q,"OrganizationIdentifier":%q,"CommentCreatedBy":%q,"CommentText":"rolling"}`, user, org, user)
				requests.Add(1)
				status, b, err := send("POST", comments, body)
				if err != nil {
					record(-1, err.Error())
					continue
				}
				record(status, string(b))
				var c struct{ CommentIdentifier string }
				if status == http.StatusCreated && json.Unmarshal(b, &c) == nil {
					mu.Lock()
					acked = append(acked, c.CommentIdentifier)
					mu.Unlock()
				}
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for ctx.Err() == nil {
				requests.Add(1)
				status, b, err := send("GET", comments+"?UserIdentifier="+user+"&Take=5&Sort=CommentCreated%20desc", "")
				if err != nil {
					record(-1, err.Error())
					continue
				}
				record(status, string(b))
			}
		})
	}

	began := time.Now()
	time.Sleep(500 * time.Millisecond) // load on both before the first restart
	for round := range 2 {
		for i, proc := range procs {
			if err := proc.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			waitDraining(t, proc)
			for deadline := time.Now().Add(5 * time.Second); proxy.Ready(i); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("round %d: the proxy still routes to replica %d 5 s after its /readyz turned 503", round, i)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := proc.Wait(ctx)
			cancel()
			if err != nil {
				t.Errorf("round %d: replica %d did not exit cleanly on SIGTERM: %v", round, i, err)
			}
			proc.Restart()
			waitReady(t, proxy, i)
			time.Sleep(300 * time.Millisecond) // served again before the other one stops
		}
	}
	stop()
	wg.Wait()
	elapsed := time.Since(began)

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d requests in %v over 4 restarts: statuses %v; %d writes acknowledged; retried by the proxy on the other replica (connection refused) %d; re-sent by net/http on a new connection %d; served %d and %d",
		requests.Load(), elapsed.Round(time.Millisecond), statuses, len(acked), proxy.Retried.Load(), proxy.Resent.Load(), proxy.Served(0), proxy.Served(1))
	for status, n := range statuses {
		if status < 0 || status >= 500 {
			t.Errorf("%d requests answered %d (-1: no answer): %q", n, status, failures)
		}
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged")
	}
	stored := map[string]bool{}
	r := reg.MustByName("UserComment")
	rows, err := st.DB(context.Background()).Table(st.TableName(r)).Select("comment_identifier").Where("user_identifier = ?", user).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		stored[id] = true
	}
	lost := 0
	for _, id := range acked {
		if !stored[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes are not in the database", lost, len(acked))
	}
}

// waitDraining waits until the replica's own /readyz answers 503 Draining after SIGTERM,
// failing if its listener closes first: the load balancer must see the 503 while the replica
// still serves.
func waitDraining(t *testing.T, proc *cluster.Process) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		res, err := client.Get(proc.URL() + "/readyz")
		if err != nil {
			t.Fatalf("replica %s: /readyz failed before it answered 503 Draining: %v", proc.Addr(), err)
		}
		var r struct{ Status string }
		_ = json.NewDecoder(res.Body).Decode(&r)
		res.Body.Close()
		if res.StatusCode == http.StatusServiceUnavailable && r.Status == "Draining" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s: /readyz still %d %q 5 s after SIGTERM", proc.Addr(), res.StatusCode, r.Status)
		}
	}
}

// waitReady waits until the proxy's probe sees backend i ready again.
func waitReady(t *testing.T, proxy *cluster.Proxy, i int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !proxy.Ready(i) {
		if time.Now().After(deadline) {
			t.Fatalf("replica %d not ready 30 s after its restart", i)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
