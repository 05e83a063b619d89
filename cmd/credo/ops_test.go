package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"credo/engine"
	"credo/handlers"
	"credo/handlers/deadline"
	"credo/handlers/route"
	"credo/internal/testauth"
	"credo/resources"
)

// testOps parses serve's operability flags from args.
func testOps(t *testing.T, args ...string) (*opsConfig, error) {
	t.Helper()
	var o opsConfig
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	check := o.bind(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return &o, check()
}

// TestOpsFlags: defaults are bounded, flags and their environment twins are read, and a
// malformed value is an error naming the flag, never a silent default.
func TestOpsFlags(t *testing.T) {
	o, err := testOps(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.ReadHeaderTimeout <= 0 || o.ReadTimeout <= 0 || o.WriteTimeout <= 0 || o.IdleTimeout <= 0 ||
		o.MaxHeaderBytes != defaultMaxHeaderBytes || o.AdminAddr != "" || len(o.CORSOrigins) != 0 || o.LogFormat != "text" {
		t.Errorf("defaults %+v", o)
	}
	t.Setenv("CREDO_WRITE_TIMEOUT", "90s")
	t.Setenv("CREDO_CORS_ORIGINS", "https://a.example, https://b.example")
	o, err = testOps(t, "--read-timeout", "5s", "--log-format", "json", "--log-level", "debug")
	if err != nil {
		t.Fatal(err)
	}
	if o.WriteTimeout != 90*time.Second || o.ReadTimeout != 5*time.Second || len(o.CORSOrigins) != 2 || o.CORSOrigins[1] != "https://b.example" {
		t.Errorf("parsed %+v", o)
	}
	hs := o.httpServer(http.NotFoundHandler())
	if hs.ReadTimeout != 5*time.Second || hs.WriteTimeout != 90*time.Second || hs.ReadHeaderTimeout != o.ReadHeaderTimeout ||
		hs.IdleTimeout != o.IdleTimeout || hs.MaxHeaderBytes != defaultMaxHeaderBytes {
		t.Errorf("server %+v", hs)
	}
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{args: []string{"--log-format", "xml"}, want: "--log-format"},
		{args: []string{"--log-level", "verbose"}, want: "--log-level"},
		{args: []string{"--idle-timeout", "soon"}, want: "--idle-timeout"},
		{args: []string{"--shutdown-timeout", "-1s"}, want: `--shutdown-timeout "-1s" must be at least 1s`},
		{args: []string{"--max-header-bytes", "100"}, want: "--max-header-bytes"},
		// A zero timeout would be net/http's "no limit": a slow client holds its connection
		// forever. It is refused, and so is one too short to serve an ordinary client.
		{args: []string{"--write-timeout", "0"}, want: `--write-timeout "0" must be at least 1s: 0 would mean no limit`},
		{args: []string{"--read-timeout", "0s"}, want: `--read-timeout "0s" must be at least 1s`},
		{args: []string{"--read-header-timeout", "0"}, want: `--read-header-timeout "0" must be at least 1s`},
		{args: []string{"--idle-timeout", "0"}, want: `--idle-timeout "0" must be at least 1s`},
		{args: []string{"--shutdown-timeout", "0"}, want: `--shutdown-timeout "0" must be at least 1s`},
		{args: []string{"--write-timeout", "500ms"}, want: `--write-timeout "500ms" must be at least 1s`},
		// A shutdown delay of 0 is meaningful (the listener closes at once); a negative one is not.
		{args: []string{"--shutdown-delay", "-1s"}, want: `--shutdown-delay "-1s" must not be negative`},
		// A value from the environment is named by its variable, as the operator wrote it.
		{env: "CREDO_WRITE_TIMEOUT=0", want: `CREDO_WRITE_TIMEOUT="0" must be at least 1s`},
		{env: "CREDO_READ_HEADER_TIMEOUT=10", want: `CREDO_READ_HEADER_TIMEOUT="10" is not a duration such as 10s`},
		{env: "CREDO_MAX_HEADER_BYTES=1", want: `CREDO_MAX_HEADER_BYTES="1" must be a number of bytes`},
	} {
		if k, v, ok := strings.Cut(tc.env, "="); ok {
			t.Setenv(k, v)
		}
		if _, err := testOps(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %s: %v, want an error naming %s", tc.args, tc.env, err, tc.want)
		}
	}
	if code, _, stderr := cli(t, "serve", "--log-format", "xml"); code != 2 || !strings.Contains(stderr, "--log-format") {
		t.Errorf("serve with a bad log format: %d %s", code, stderr)
	}
	t.Setenv("CREDO_WRITE_TIMEOUT", "")
	t.Setenv("CREDO_READ_HEADER_TIMEOUT", "")
	t.Setenv("CREDO_MAX_HEADER_BYTES", "")
	// With --admin-addr wrong too, a serve that took the zero would still stop, not serve.
	if code, _, stderr := cli(t, "serve", "--write-timeout", "0", "--admin-addr", "nonsense"); code != 2 || !strings.Contains(stderr, `--write-timeout "0" must be at least 1s`) {
		t.Errorf("serve with a zero write timeout: %d %s", code, stderr)
	}
	if o, err := testOps(t, "--shutdown-delay", "0"); err != nil || o.ShutdownDelay != 0 {
		t.Errorf("--shutdown-delay 0: %v, want accepted", err)
	}
}

// TestServeRefusesABadAddressFirst: a listen address that does not parse (--addr, --admin-addr,
// or their environment twins) is a usage error (exit 2) naming the flag, found before any
// database is opened: nothing is created or migrated in the data folder, and no listener opens.
func TestServeRefusesABadAddressFirst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{args: []string{"--addr", "nonsense"}, want: "--addr"},
		{args: []string{"--addr", "127.0.0.1:99999"}, want: "--addr"},
		{args: []string{"--admin-addr", "127.0.0.1"}, want: "--admin-addr"},
		{args: []string{"--admin-addr", "127.0.0.1:90x"}, want: "--admin-addr"},
		{env: "CREDO_ADMIN_ADDR=localhost", want: "--admin-addr"},
	} {
		if k, v, ok := strings.Cut(tc.env, "="); ok {
			t.Setenv(k, v)
		}
		dir := filepath.Join(t.TempDir(), "data")
		args := append([]string{"serve", "--database", "sqlite:" + dir}, tc.args...)
		code, _, stderr := cli(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v %s: exit %d %q, want 2 naming %s", tc.args, tc.env, code, stderr, tc.want)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v %s: the data folder was created (%v)", tc.args, tc.env, err)
		}
	}
}

// TestSlowClients: with short timeouts, clients that send their header or body a byte at a
// time are cut off at the header and read timeouts, while a normal client is served meanwhile.
func TestSlowClients(t *testing.T) {
	o, err := testOps(t, "--read-header-timeout", "1s", "--read-timeout", "2s")
	if err != nil {
		t.Fatal(err)
	}
	hs := o.httpServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, deadline.Body(w, r)); err != nil {
			return
		}
		w.Write([]byte("ok"))
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	addr := ln.Addr().String()

	// trickle sends head at once, then rest one byte per interval, and reports how long the
	// server kept the connection.
	trickle := func(head, rest string, interval time.Duration) time.Duration {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Error(err)
			return 0
		}
		defer c.Close()
		start := time.Now()
		closed := make(chan struct{})
		go func() { io.Copy(io.Discard, c); close(closed) }()
		c.Write([]byte(head))
		for i := 0; i < len(rest); i++ {
			select {
			case <-closed:
				return time.Since(start)
			case <-time.After(interval):
			}
			if _, err := c.Write([]byte{rest[i]}); err != nil {
				break
			}
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
		}
		return time.Since(start)
	}
	var wg sync.WaitGroup
	kept := make([]time.Duration, 20)
	for i := range kept {
		wg.Go(func() {
			if i%2 == 0 {
				kept[i] = trickle("", "GET / HTTP/1.1\r\nHost: credo\r\nX-Padding: "+strings.Repeat("p", 40)+"\r\n\r\n", time.Second/4)
			} else {
				kept[i] = trickle("POST / HTTP/1.1\r\nHost: credo\r\nContent-Length: 100\r\n\r\n", strings.Repeat("b", 100), time.Second/2)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	for range 5 {
		res, err := http.Get("http://" + addr + "/")
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("a normal client beside slow ones: %v %v", res, err)
		}
		res.Body.Close()
	}
	wg.Wait()
	for i, d := range kept {
		limit := o.ReadHeaderTimeout
		if i%2 == 1 {
			limit = o.ReadTimeout
		}
		if d > limit+time.Second {
			t.Errorf("slow client %d kept %s, past its timeout %s", i, d, limit)
		}
	}
}

// TestDrain: on shutdown /readyz answers 503 at once, new connections are refused after the
// delay, and the in-flight request finishes before drain returns nil; one that outlasts the
// shutdown timeout makes drain fail.
func TestDrain(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		release bool
	}{{name: "in time", release: true}, {name: "too slow", release: false}} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := engine.Open(context.Background(), "sqlite:"+t.TempDir(), []string{"e01"}, reg)
			if err != nil {
				t.Fatal(err)
			}
			started, release := make(chan struct{}), make(chan struct{})
			srv := &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{}, Modules: []route.Route{{Method: http.MethodGet,
				Path: "test/block", Access: route.Public, Handler: func(w http.ResponseWriter, r *http.Request) error {
					close(started)
					<-release
					_, err := w.Write([]byte("done"))
					return err
				}}}}
			o, err := testOps(t, "--shutdown-delay", "500ms", "--shutdown-timeout", "1s")
			if err != nil {
				t.Fatal(err)
			}
			hs, ln, errc := serveForDrain(t, o, srv)
			base := "http://" + ln.Addr().String()
			inflight := make(chan string, 1)
			go func() {
				res, err := http.Get(base + "/v2/e01/test/block")
				if err != nil {
					inflight <- err.Error()
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				inflight <- string(b)
			}()
			<-started
			drained := make(chan error, 1)
			go func() { drained <- o.drain(srv, hs, nil, errc, db) }()
			time.Sleep(50 * time.Millisecond)
			res, err := http.Get(base + "/readyz")
			if err != nil || res.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("readyz while draining: %v %v", res, err)
			}
			res.Body.Close()
			for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					break
				}
				c.Close()
				if time.Now().After(deadline) {
					t.Fatal("the listener still accepts after the shutdown delay")
				}
			}
			if tc.release {
				close(release)
				if got := <-inflight; got != "done" {
					t.Errorf("in-flight request: %q", got)
				}
				if err := <-drained; err != nil {
					t.Errorf("drain: %v", err)
				}
				return
			}
			err = <-drained
			if err == nil || !strings.Contains(err.Error(), "1 request did not finish within 1s") {
				t.Errorf("drain with a request outlasting the timeout: %v, want it to say how many were abandoned", err)
			}
			close(release)
			<-inflight
		})
	}
}

// TestDrainCutsOffWriters: a drain that runs out of time while a request writes its answer to a
// client that does not read closes the connection, which ends the request at once: the drain
// waits for it to return (so that it logs its access line, aborted) and closes the database,
// exiting within its grace after the timeout rather than leaving the request running.
func TestDrainCutsOffWriters(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(context.Background(), "sqlite:"+t.TempDir(), []string{"e01"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	writing, returned := make(chan struct{}), make(chan struct{})
	srv := &handlers.Server{Registry: reg, Database: db, Auth: testauth.Operator(), Authz: testauth.AllowAll{}, Modules: []route.Route{{Method: http.MethodGet,
		Path: "test/endless", Access: route.Public, Handler: func(w http.ResponseWriter, r *http.Request) error {
			defer close(returned)
			close(writing)
			chunk := make([]byte, 64<<10)
			for {
				if _, err := w.Write(chunk); err != nil {
					time.Sleep(100 * time.Millisecond) // unwinding: a rollback, a log line
					return nil
				}
			}
		}}}}
	o, err := testOps(t, "--shutdown-timeout", "1s", "--write-timeout", "1m")
	if err != nil {
		t.Fatal(err)
	}
	hs, ln, errc := serveForDrain(t, o, srv)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v2/e01/test/endless HTTP/1.1\r\nHost: x\r\n\r\n") // and never reads
	<-writing
	start := time.Now()
	err = o.drain(srv, hs, nil, errc, db)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "1 request did not finish within 1s") {
		t.Errorf("drain: %v, want 1 request abandoned", err)
	}
	if took > time.Second+abandonGrace+200*time.Millisecond {
		t.Errorf("drain took %v, want about 1s", took)
	}
	select {
	case <-returned:
	default:
		t.Error("the drain returned before the request it cut off")
	}
	if srv.Observer.InFlight() != 0 {
		t.Errorf("%d requests in flight after the drain", srv.Observer.InFlight())
	}
}

// TestServeOperability: serve logs JSON access lines, and its admin listener serves the
// metrics (requests by route, Go runtime, process, pools) and pprof.
func TestServeOperability(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--database", "sqlite:" + t.TempDir(),
			"--log-format", "json", "--log-level", "debug"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	sc := bufio.NewScanner(pr)
	lines := make(chan map[string]any, 1000)
	addrRe := regexp.MustCompile(`serving http://([0-9.:]+)/`)
	var addr, admin string
	for sc.Scan() && (addr == "" || admin == "") {
		if m := addrRe.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "credo admin listening" {
			admin = fmt.Sprint(m["addr"])
		}
	}
	if addr == "" || admin == "" {
		t.Fatalf("serve did not report its addresses (%q, %q)", addr, admin)
	}
	go func() {
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if st, _ := get("http://" + addr + "/v2/e01/platform/version"); st != http.StatusOK {
		t.Fatalf("version: %d", st)
	}
	for deadline := time.After(5 * time.Second); ; {
		select {
		case m := <-lines:
			if m["msg"] != "request" {
				continue
			}
			if m["route"] != "/v2/{partition}/platform/version" || m["status"] != float64(200) || m["partition"] != "e01" {
				t.Errorf("access line %v", m)
			}
		case <-deadline:
			t.Fatal("no JSON access line")
		}
		break
	}
	st, metrics := get("http://" + admin + "/metrics")
	if st != http.StatusOK {
		t.Fatalf("metrics: %d", st)
	}
	for _, want := range []string{`credo_http_requests_total{method="GET",route="/v2/{partition}/platform/version",status="200"} 1`,
		"go_goroutines", "process_resident_memory_bytes", `credo_db_pool_max_connections{pool="e01"}`, "go_build_info"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if st, body := get("http://" + admin + "/debug/pprof/"); st != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("pprof: %d", st)
	}
	for _, path := range []string{"/metrics", "/debug/pprof/"} {
		if st, _ := get("http://" + addr + path); st != http.StatusNotFound {
			t.Errorf("the main address serves %s: %d", path, st)
		}
	}
}

// serveForDrain serves srv's API as serve does (o's HTTP server) on a loopback port, for a
// test of o.drain: the server, its listener, and the channel its Serve returns on.
func serveForDrain(t *testing.T, o *opsConfig, srv *handlers.Server) (*http.Server, net.Listener, chan error) {
	t.Helper()
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	hs := o.httpServer(h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	return hs, ln, errc
}
