package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"credo/internal/testenv"
)

// TestMain lets a test run the test binary as credo itself (CREDO_TEST_RUN_MAIN=1), so that
// signals and exit codes are the real process's.
func TestMain(m *testing.M) {
	if os.Getenv("CREDO_TEST_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// slack is what a bounded step may take beyond its bound on a loaded two-CPU machine.
const slack = 1500 * time.Millisecond

// testShutdownTimeout is the --shutdown-timeout of the tests that stop credo.
const testShutdownTimeout = 4 * time.Second

// process is credo serve running as a child process.
type process struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	addr   chan string
	done   chan int
}

func startCredo(t *testing.T, args ...string) *process {
	t.Helper()
	return startCommand(t, exec.Command(os.Args[0], args...))
}

// startCommand is startCredo for a command that runs the test binary as it chooses (by
// another name, from another directory).
func startCommand(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	cmd.Env = append(os.Environ(), "CREDO_TEST_RUN_MAIN=1")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, addr: make(chan string, 1), done: make(chan int, 1)}
	go func() {
		re := regexp.MustCompile(`serving http://([0-9.:]+)/`)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				p.addr <- m[1]
			}
		}
		err := cmd.Wait()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
		p.done <- code
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	return p
}

func (p *process) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitAddr returns the address credo serves on.
func (p *process) waitAddr(t *testing.T) string {
	t.Helper()
	select {
	case a := <-p.addr:
		return a
	case code := <-p.done:
		t.Fatalf("credo exited %d before serving:\n%s", code, p.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("credo did not start:\n%s", p.log())
	}
	return ""
}

// wait returns the exit code, failing when the process takes longer than limit.
func (p *process) wait(t *testing.T, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	select {
	case code := <-p.done:
		return code, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("credo did not exit within %v:\n%s", limit, p.log())
	}
	return 0, 0
}

// silentPostgres is a listener that accepts connections and never answers.
func silentPostgres(t *testing.T) string {
	addr, _ := silentPostgresAccepting(t)
	return addr
}

// silentPostgresAccepting is silentPostgres that also says, by closing the channel, when it has
// accepted its first connection: a client is then waiting for it.
func silentPostgresAccepting(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	accepted := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if conns == nil {
				close(accepted)
			}
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String(), accepted
}

// TestServeStartupTimeout: against a database that never answers, serve exits 1 within the
// timeout (plus a second) with a message naming the partition and the database, without its
// password, whether the URL carries it as user information or as a query parameter.
func TestServeStartupTimeout(t *testing.T) {
	host := silentPostgres(t)
	for _, db := range []string{"postgres://credo:pw@" + host + "/credo", "postgres://credo@" + host + "/credo?sslmode=disable&password=pw"} {
		start := time.Now()
		code, _, stderr := cli(t, "serve", "--addr", "127.0.0.1:0", "--database", db,
			"--partitions", "e05", "--database-timeout", "1s")
		if took := time.Since(start); took > time.Second+slack {
			t.Errorf("start-up against a silent database took %v, want about 1s", took)
		}
		if code != 1 || !strings.Contains(stderr, "partition e05") || !strings.Contains(stderr, host) ||
			!strings.Contains(stderr, "within 1s") || strings.Contains(stderr, ":pw@") || strings.Contains(stderr, "password=pw") {
			t.Errorf("%s: exit %d, stderr %q", db, code, stderr)
		}
	}
}

// TestServeSignalDuringStartup: SIGTERM while start-up waits for the database exits at once.
func TestServeSignalDuringStartup(t *testing.T) {
	host, accepted := silentPostgresAccepting(t)
	p := startCredo(t, "serve", "--addr", "127.0.0.1:0", "--database", "postgres://credo@"+host+"/credo",
		"--partitions", "e05", "--database-timeout", "1m")
	select { // start-up is waiting for the database once it has connected
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatalf("credo never connected to the database:\n%s", p.log())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, took := p.wait(t, 10*time.Second)
	if code != 0 || took > slack || !strings.Contains(p.log(), "interrupted during start-up") {
		t.Errorf("SIGTERM during start-up: exit %d after %v:\n%s", code, took, p.log())
	}
}

// frozenServer starts credo serve on PostgreSQL behind a proxy (newOutageServer), and returns
// a call with the operator's token that gives the status (0: no response) and the time taken.
func frozenServer(t *testing.T, timeout time.Duration) (*process, *testenv.Proxy, func(method, path, body string) (int, time.Duration)) {
	t.Helper()
	o := newOutageServer(t, timeout)
	call := func(method, path, body string) (int, time.Duration) {
		a := o.send(outageCall{method: method, path: path, body: body}, o.token)
		if a.status == 0 {
			t.Logf("%s %s: %s", method, path, a.body)
		}
		return a.status, a.took
	}
	if st, _ := call("GET", "directory/people", ""); st != http.StatusOK {
		t.Fatalf("people before the freeze: %d", st)
	}
	return o.proc, o.proxy, call
}

// TestServeWithPostgresFrozen: with PostgreSQL frozen, requests fail with 503 within the
// statement timeout, and SIGTERM with a request in flight drains and exits 0 well within the
// shutdown timeout.
func TestServeWithPostgresFrozen(t *testing.T) {
	p, proxy, call := frozenServer(t, time.Second)
	proxy.Freeze()
	var wg sync.WaitGroup
	for _, path := range []string{"directory/people", "security/users-comments/count", "platform/health", "directory/people?Take=5"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, took := call("GET", path, "")
			if st != http.StatusServiceUnavailable || took > time.Second+slack {
				t.Errorf("GET %s with PostgreSQL frozen: %d after %v, want 503 within about 1s", path, st, took)
			}
		}()
	}
	wg.Wait()
	inFlight := make(chan int, 1)
	go func() { st, _ := call("GET", "directory/people", ""); inFlight <- st }()
	time.Sleep(200 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, took := p.wait(t, testShutdownTimeout+slack)
	if code != 0 {
		t.Errorf("SIGTERM with PostgreSQL frozen: exit %d after %v, want 0 (the request drained):\n%s", code, took, p.log())
	}
	if st := <-inFlight; st != http.StatusServiceUnavailable {
		t.Errorf("the request in flight at SIGTERM: %d, want 503", st)
	}
}

// TestServeShutdownRunsOutOfTime: a request that outlives the shutdown timeout (its statement
// timeout is longer) is abandoned: credo exits 3 at the shutdown timeout and says so, and how
// many requests it abandoned.
func TestServeShutdownRunsOutOfTime(t *testing.T) {
	p, proxy, call := frozenServer(t, time.Minute)
	proxy.Freeze()
	go call("GET", "directory/people", "") // abandoned at the shutdown timeout: no response
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, took := p.wait(t, testShutdownTimeout+5*time.Second)
	if code != exitDrainIncomplete || took < testShutdownTimeout-time.Second || !strings.Contains(p.log(), "1 request did not finish") {
		t.Errorf("exit %d after %v, want %d at about %v:\n%s", code, took, exitDrainIncomplete, testShutdownTimeout, p.log())
	}
}

// TestServeSecondSignalEndsTheDrain: a second SIGTERM while a request holds the drain (its
// statement outlives the shutdown timeout) ends the process at once with exit 3, saying so,
// rather than at the shutdown timeout.
func TestServeSecondSignalEndsTheDrain(t *testing.T) {
	p, proxy, call := frozenServer(t, time.Minute)
	proxy.Freeze()
	go call("GET", "directory/people", "") // held by the frozen database
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, took := p.wait(t, testShutdownTimeout+5*time.Second)
	if code != exitDrainIncomplete || took > testShutdownTimeout/2 || !strings.Contains(p.log(), "a second signal") {
		t.Errorf("exit %d after %v, want %d at once (the shutdown timeout is %v):\n%s", code, took, exitDrainIncomplete, testShutdownTimeout, p.log())
	}
}

// TestServeAccessLines: serve's access lines, written without slog's handler when their values
// are plain and through it otherwise, are lines of the configured format carrying the request:
// JSON objects with --log-format json, key=value text by default.
func TestServeAccessLines(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			p := startCredo(t, "serve", "--addr", "127.0.0.1:0", "--database", "sqlite:"+t.TempDir(), "--partitions", "e01",
				"--log-format", format)
			addr := p.waitAddr(t)
			for _, id := range []string{"plain-id-1", `quoted"id`} {
				req, _ := http.NewRequest("GET", "http://"+addr+"/v2/e01/directory/people", nil)
				req.Header.Set("X-Request-Id", id)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusUnauthorized {
					t.Fatalf("%s: %d, want 401", id, res.StatusCode)
				}
			}
			want := map[string]bool{"plain-id-1": false, `quoted"id`: false}
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) && (!want["plain-id-1"] || !want[`quoted"id`]) {
				time.Sleep(50 * time.Millisecond) // lines reach the log within logFlushEvery
				for _, line := range strings.Split(p.log(), "\n") {
					if format == "json" {
						var m map[string]any
						if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "request" {
							continue
						}
						id, _ := m["request_id"].(string)
						if _, ok := want[id]; ok && m["status"] == float64(401) && m["partition"] == "e01" &&
							m["route"] == "/v2/{partition}/directory/people" && m["level"] == "INFO" {
							want[id] = true
						}
						continue
					}
					for id := range want {
						quoted := strconv.Quote(id)
						if id == "plain-id-1" {
							quoted = id
						}
						if strings.Contains(line, " msg=request request_id="+quoted+" method=GET route=/v2/{partition}/directory/people partition=e01 status=401 ") {
							want[id] = true
						}
					}
				}
			}
			for id, seen := range want {
				if !seen {
					t.Errorf("no %s access line for request %q:\n%s", format, id, p.log())
				}
			}
		})
	}
}

// TestServeAddressInUse: serve on an address another listener holds exits 1 naming it, and
// says nothing else: the background clean-ups, started before the listener, stop before the
// database closes instead of each logging a failure on the closed database.
func TestServeAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := startCredo(t, "serve", "--addr", ln.Addr().String(), "--database", b.URL, "--partitions", testenv.Partition(t))
			code, _ := p.wait(t, 30*time.Second)
			if log := p.log(); code != 1 || !strings.Contains(log, "address already in use") || strings.Contains(log, "housekeeping") {
				t.Errorf("exit %d; want 1 and only the address in use:\n%s", code, log)
			}
		})
	}
}

// TestServeLogsItsStartUp: nothing listens while start-up migrates the partitions (which may
// build indexes on large tables at the first start-up of a release), so the log says that it
// has begun, before the line that it serves, and that line says how long it took.
func TestServeLogsItsStartUp(t *testing.T) {
	p := startCredo(t, "serve", "--addr", "127.0.0.1:0", "--database", "sqlite:"+t.TempDir(), "--partitions", "e01,e02")
	p.waitAddr(t)
	log := p.log()
	starting := strings.Index(log, `msg="credo starting: opening and migrating the partitions"`)
	serving := strings.Index(log, `msg="credo serving"`)
	if starting < 0 || serving < starting || !strings.Contains(log[starting:serving], `partitions="[e01 e02]"`) {
		t.Errorf("the log does not say that start-up began, with the partitions, before serving:\n%s", log)
	}
	if !regexp.MustCompile(`msg="credo serving" .* startup=[0-9.]+m?s`).MatchString(log) {
		t.Errorf("the serving line does not say how long start-up took:\n%s", log)
	}
	p.cmd.Process.Signal(os.Interrupt)
	p.wait(t, 10*time.Second)
}

// TestServeKeepsAHeapFloor: serve tunes the collector to its heap floor (internal/heapfloor),
// which /metrics shows as GOGC above 100 once it has collected, and says so on its serving
// line; an operator's GOGC stands instead.
func TestServeKeepsAHeapFloor(t *testing.T) {
	for _, tc := range []struct {
		name, gogc, said string
		tuned            bool
	}{
		{name: "GOGC unset", said: fmt.Sprintf(`gc="heap floor %d MiB"`, heapFloor>>20), tuned: true},
		{name: "GOGC set", gogc: "100", said: `gc="GOGC from the environment"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			if tc.gogc == "" {
				os.Unsetenv("GOGC") // t.Setenv restores it after the test
			}
			p := startCredo(t, "serve", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--database", "sqlite:"+t.TempDir(), "--partitions", "e01")
			defer func() {
				p.cmd.Process.Signal(os.Interrupt)
				p.wait(t, 10*time.Second)
			}()
			p.waitAddr(t)
			log := p.log()
			if !strings.Contains(log, tc.said) {
				t.Errorf("the log does not say %s:\n%s", tc.said, log)
			}
			m := regexp.MustCompile(`msg="credo admin listening" addr=([0-9.:]+)`).FindStringSubmatch(log)
			if m == nil {
				t.Fatalf("no admin address in the log:\n%s", log)
			}
			res, err := http.Get("http://" + m[1] + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			g := regexp.MustCompile(`(?m)^go_gc_gogc_percent ([0-9]+)$`).FindSubmatch(body)
			if g == nil {
				t.Fatalf("/metrics has no go_gc_gogc_percent")
			}
			if percent, _ := strconv.Atoi(string(g[1])); tc.tuned != (percent > 100) {
				t.Errorf("go_gc_gogc_percent %d; want above 100: %v", percent, tc.tuned)
			}
		})
	}
}
