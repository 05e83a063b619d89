package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/handlers/observe"
	"credo/internal/testenv"
)

const userRoute = "/v2/{partition}/security/users/{UserIdentifier}"

var generatedID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// problemID returns the RequestId member of a problem document.
func problemID(t *testing.T, r response) string {
	t.Helper()
	var p struct{ RequestId string }
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem document: %v: %s", err, r.body)
	}
	return p.RequestId
}

// TestAccessLines: one JSON access line per request with the fields of docs/operations.md,
// for a 200, a 404 and a 500; probes at debug; the cause of a 500 logged once with its id.
func TestAccessLines(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := newObserved(t, b.URL)
			id := o.user(t)
			ok := o.get(t, "/v2/{p}/security/users/"+id, "Authorization", "Bearer good", "X-Request-Id", "client-1").expect(t, "get", http.StatusOK)
			if got := ok.header.Get("X-Request-Id"); got != "client-1" {
				t.Errorf("X-Request-Id %q, want the client's", got)
			}
			missing := o.get(t, "/v2/{p}/security/users/"+uuid.NewString(), "Authorization", "Bearer good").expect(t, "get missing", http.StatusNotFound)
			bug := o.get(t, "/v2/{p}/test/panic").expect(t, "panic", http.StatusInternalServerError)

			line := o.log.waitLine(t, "client-1")
			want := map[string]any{"level": "INFO", "method": "GET", "route": userRoute, "partition": o.partition,
				"status": float64(200), "bytes": float64(len(ok.body)), "user": "0190a6f0-0000-7000-8000-0000000000aa"}
			for k, v := range want {
				if line[k] != v {
					t.Errorf("200 line %s = %v, want %v", k, line[k], v)
				}
			}
			if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(line["time"])); err != nil {
				t.Errorf("200 line time %v: %v", line["time"], err)
			}
			if d, ok := line["duration"].(float64); !ok || d <= 0 {
				t.Errorf("200 line duration %v", line["duration"])
			}
			mid := missing.header.Get("X-Request-Id")
			if !generatedID.MatchString(mid) || problemID(t, missing) != mid {
				t.Errorf("404: header id %q, problem id %q", mid, problemID(t, missing))
			}
			if l := o.log.waitLine(t, mid); l["status"] != float64(404) || l["route"] != userRoute {
				t.Errorf("404 line %v", l)
			}
			bid := bug.header.Get("X-Request-Id")
			if problemID(t, bug) != bid {
				t.Errorf("500: problem id %q, header %q", problemID(t, bug), bid)
			}
			if l := o.log.waitLine(t, bid); l["status"] != float64(500) || l["route"] != "/v2/{partition}/test/panic" {
				t.Errorf("500 line %v", l)
			}
			panics := o.log.lines(t, "panic", bid)
			if len(panics) != 1 || panics[0]["level"] != "ERROR" || !strings.Contains(fmt.Sprint(panics[0]["stack"]), "goroutine") ||
				panics[0]["panic"] != "test: a bug" {
				t.Errorf("panic lines %v", panics)
			}
			if n := len(o.log.lines(t, "request failed", bid)); n != 0 {
				t.Errorf("the panic's 500 is logged again %d times", n)
			}
			fail := o.get(t, "/v2/{p}/test/fail").expect(t, "fail", http.StatusInternalServerError)
			fid := fail.header.Get("X-Request-Id")
			o.log.waitLine(t, fid)
			if ls := o.log.lines(t, "request failed", fid); len(ls) != 1 || ls[0]["err"] != "test: boom" {
				t.Errorf("500 cause lines %v", ls)
			}
			for _, path := range []string{"/livez", "/readyz", "/v2/{p}/platform/health"} {
				res := o.get(t, path).expect(t, path, http.StatusOK)
				if l := o.log.waitLine(t, res.header.Get("X-Request-Id")); l["level"] != "DEBUG" {
					t.Errorf("%s logged at %v, want DEBUG", path, l["level"])
				}
			}
			if strings.Contains(o.log.String(), id) {
				t.Errorf("the log holds the raw record id %s; routes are logged as templates", id)
			}
		})
	}
}

// TestRequestIDs: an acceptable client id is echoed, any other is replaced by a generated one,
// on every kind of answer (v2, v1, problems, probes, preflights, unmatched paths).
func TestRequestIDs(t *testing.T) {
	o := newObserved(t, testenv.Backends(t)[0].URL)
	long := strings.Repeat("x", observe.MaxRequestIDLen)
	for _, tc := range []struct{ sent, want string }{
		{sent: "abc-123_XYZ.~!", want: "abc-123_XYZ.~!"},
		{sent: long, want: long},
		{sent: long + "x"},
		{sent: "has space"},
		{sent: "caf\xc3\xa9"},
		{sent: ""},
	} {
		for _, path := range []string{"/livez", "/readyz", "/v2/{p}/platform/version", "/v2/{p}/security/users",
			"/api/test/0000abcd", "/api/test/panic", "/no/such/path", "/v2/nosuch/platform/version"} {
			res := o.get(t, path, "X-Request-Id", tc.sent)
			got := res.header.Get("X-Request-Id")
			if tc.want != "" && got != tc.want {
				t.Errorf("%s with id %q: echoed %q", path, tc.sent, got)
			}
			if tc.want == "" && !generatedID.MatchString(got) {
				t.Errorf("%s with id %q: %q is not a generated id", path, tc.sent, got)
			}
			if res.status >= 400 && problemID(t, res) != got {
				t.Errorf("%s: problem RequestId %q, header %q", path, problemID(t, res), got)
			}
		}
	}
	// A control character, which net/http's client refuses to send, through a raw connection.
	conn, err := net.Dial("tcp", o.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /livez HTTP/1.1\r\nHost: credo\r\nX-Request-Id: ctl\x01char\r\n\r\n")
	raw, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw.Body.Close()
	if got := raw.Header.Get("X-Request-Id"); raw.StatusCode == http.StatusOK && !generatedID.MatchString(got) {
		t.Errorf("id with a control character: echoed %q", got)
	}
	seen := map[string]bool{}
	for range 100 {
		id := o.get(t, "/livez").header.Get("X-Request-Id")
		if seen[id] {
			t.Fatalf("generated id %s twice", id)
		}
		seen[id] = true
	}
}

// TestPanicKeepsConnection: a panic in a v2 module or a v1 handler is a 500 problem document,
// and the next request on the same connection is served.
func TestPanicKeepsConnection(t *testing.T) {
	o := newObserved(t, testenv.Backends(t)[0].URL)
	conn, err := net.Dial("tcp", o.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	roundTrip := func(path string) (*http.Response, string) {
		t.Helper()
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: credo\r\n\r\n", strings.ReplaceAll(path, "{p}", o.partition))
		res, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var b strings.Builder
		_, err = bufio.NewReader(res.Body).WriteTo(&b)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return res, b.String()
	}
	for _, path := range []string{"/v2/{p}/test/panic", "/api/test/panic"} {
		res, body := roundTrip(path)
		if res.StatusCode != http.StatusInternalServerError || res.Header.Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(body, "An unexpected error occurred.") {
			t.Errorf("%s: %d %s %s", path, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
		if res, _ := roundTrip("/v2/{p}/platform/version"); res.StatusCode != http.StatusOK {
			t.Errorf("after %s, the same connection answered %d", path, res.StatusCode)
		}
	}
	if got := o.scrape(t); !strings.Contains(got, observe.MetricPanics+" 2") {
		t.Errorf("panics not counted:\n%s", grepLines(got, observe.MetricPanics))
	}
}

// TestMetrics: requests are counted by route template, method and status, never by raw path;
// in-flight requests, authentication failures by reason and the database pools are exported,
// and the admin handler serves pprof.
func TestMetrics(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			o := newObserved(t, b.URL)
			id := o.user(t)
			other := uuid.NewString()
			o.get(t, "/v2/{p}/security/users/"+id, "Authorization", "Bearer good").expect(t, "get", http.StatusOK)
			o.get(t, "/v2/{p}/security/users/"+other, "Authorization", "Bearer good").expect(t, "get missing", http.StatusNotFound)
			o.get(t, "/v2/{p}/security/users/"+other, "Authorization", "Bearer old").expect(t, "expired", http.StatusUnauthorized)
			o.get(t, "/v2/{p}/security/users/"+other).expect(t, "no credential", http.StatusUnauthorized)
			o.get(t, "/api/test/0000abcd").expect(t, "v1", http.StatusOK)
			o.get(t, "/no/such/"+other).expect(t, "unmatched", http.StatusNotFound)
			o.send(t, "BREW", "/v2/{p}/platform/version").expect(t, "BREW", http.StatusMethodNotAllowed)
			got := o.scrape(t)
			for _, want := range []string{
				`credo_http_requests_total{method="GET",route="` + userRoute + `",status="200"} 1`,
				`credo_http_requests_total{method="GET",route="` + userRoute + `",status="404"} 1`,
				`credo_http_requests_total{method="GET",route="` + userRoute + `",status="401"} 2`,
				`credo_http_requests_total{method="GET",route="/api/test/{id}",status="200"} 1`,
				`credo_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
				`credo_http_requests_total{method="OTHER",route="/v2/{partition}/platform/version",status="405"} 1`,
				`credo_http_request_duration_seconds_count{method="GET",route="` + userRoute + `",status="200"} 1`,
				`credo_http_requests_in_flight 0`,
				`credo_auth_failures_total{credential="unknown",reason="expired"} 1`,
				`credo_auth_failures_total{credential="unknown",reason="missing"} 1`,
				`credo_db_pool_max_connections{pool=`,
				`credo_db_pool_connections{pool=`,
				`credo_db_pool_waits_total{pool=`,
			} {
				if !strings.Contains(got, want) {
					t.Errorf("metrics lack %s\n%s", want, grepLines(got, strings.SplitN(want, "{", 2)[0]))
				}
			}
			requests := grepLines(got, "credo_http_")
			for _, raw := range []string{id, other, o.partition, "BREW"} {
				if strings.Contains(requests, raw) {
					t.Errorf("request metrics hold the raw value %s", raw)
				}
			}
			w := o.scrapePath(t, "/debug/pprof/")
			if !strings.Contains(w, "goroutine") {
				t.Errorf("pprof index: %s", w)
			}
		})
	}
}

// TestCORS: a preflight from an allowed origin gets the methods and headers, Authorization,
// Idempotency-Key, If-Match and If-None-Match among them, and answers expose
// Idempotent-Replayed and ETag; a refused origin gets no CORS header at all, on preflights and
// on requests.
func TestCORS(t *testing.T) {
	o := newObserved(t, testenv.Backends(t)[0].URL)
	preflight := func(origin string) response {
		return o.send(t, http.MethodOptions, "/v2/{p}/security/users", "Origin", origin,
			"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization,content-type,idempotency-key,if-match,if-none-match")
	}
	res := preflight(corsOrigin)
	if res.status != http.StatusNoContent || res.header.Get("Access-Control-Allow-Origin") != corsOrigin ||
		!strings.Contains(res.header.Get("Access-Control-Allow-Methods"), "GET") ||
		!strings.Contains(strings.ToLower(res.header.Get("Access-Control-Allow-Headers")), "authorization") ||
		!strings.Contains(strings.ToLower(res.header.Get("Access-Control-Allow-Headers")), "idempotency-key") ||
		!strings.Contains(strings.ToLower(res.header.Get("Access-Control-Allow-Headers")), "if-match") ||
		!strings.Contains(strings.ToLower(res.header.Get("Access-Control-Allow-Headers")), "if-none-match") ||
		res.header.Get("Access-Control-Max-Age") == "" {
		t.Errorf("allowed preflight: %d %v", res.status, res.header)
	}
	if res.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Error("credentials are allowed across origins")
	}
	get := o.get(t, "/v2/{p}/platform/version", "Origin", corsOrigin)
	if get.header.Get("Access-Control-Allow-Origin") != corsOrigin || !strings.Contains(get.header.Get("Access-Control-Expose-Headers"), "X-Request-Id") ||
		!strings.Contains(get.header.Get("Access-Control-Expose-Headers"), "Idempotent-Replayed") ||
		!strings.Contains(strings.ToLower(get.header.Get("Access-Control-Expose-Headers")), "etag") {
		t.Errorf("allowed request: %v", get.header)
	}
	for _, res := range []response{preflight("https://evil.example"), o.get(t, "/v2/{p}/platform/version", "Origin", "https://evil.example")} {
		for k := range res.header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("refused origin got %s: %v", k, res.header)
			}
		}
	}
	if l := o.log.waitLine(t, res.header.Get("X-Request-Id")); l["route"] != "preflight" {
		t.Errorf("preflight line %v", l)
	}
}

// TestFailureLogging: a handler that fails after writing leaves its response alone and logs
// once, with no superfluous WriteHeader from net/http; a client that leaves is a 499, not a
// logged 500.
func TestFailureLogging(t *testing.T) {
	o := newObserved(t, testenv.Backends(t)[0].URL)
	res := o.get(t, "/v2/{p}/test/late-error").expect(t, "late error", http.StatusOK)
	if string(res.body) != "partial" {
		t.Errorf("body %q", res.body)
	}
	id := res.header.Get("X-Request-Id")
	o.log.waitLine(t, id)
	if ls := o.log.lines(t, "request failed", id); len(ls) != 1 || !strings.Contains(fmt.Sprint(ls[0]["err"]), "late failure") {
		t.Errorf("late failure lines %v", ls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.URL+"/v2/"+o.partition+"/test/wait", nil)
	req.Header.Set("X-Request-Id", "leaver")
	go func() { <-o.started; cancel() }()
	if _, err := o.Client().Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("the leaving client got %v", err)
	}
	if l := o.log.waitLine(t, "leaver"); l["status"] != float64(observe.StatusClientClosed) {
		t.Errorf("leaver line %v", l)
	}
	for _, m := range o.log.records(t) {
		if m["level"] == "ERROR" && m["request_id"] == "leaver" {
			t.Errorf("a client that left is logged as an error: %v", m)
		}
	}
	if s := o.errorLog.String(); s != "" {
		t.Errorf("net/http logged: %s", s)
	}
}

// TestOutageLogsAreBounded: thousands of requests failing because the database is unavailable
// log one line when the outage starts and one when it ends (plus one per OutageReportEvery),
// and other failures at most ErrorLinesPerSecond lines a second; every request still gets its
// access line and its 503 or 500.
func TestOutageLogsAreBounded(t *testing.T) {
	o := newObserved(t, testenv.Backends(t)[0].URL)
	const workers, each = 8, 250
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				path := "/v2/{p}/test/unavailable"
				if i%5 == 0 && w%2 == 0 {
					path = "/v2/{p}/test/fail"
				}
				res := o.get(t, path)
				mu.Lock()
				statuses[res.status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	failed := statuses[http.StatusServiceUnavailable]
	if failed+statuses[http.StatusInternalServerError] != workers*each || failed == 0 {
		t.Fatalf("statuses %v", statuses)
	}
	if n := len(o.log.lines(t, "database unavailable", "")); n != 1 {
		t.Errorf("%d outage-start lines, want 1", n)
	}
	still := len(o.log.lines(t, "database still unavailable", ""))
	if max := int(elapsed/observe.OutageReportEvery) + 1; still > max {
		t.Errorf("%d outage reports in %s, want at most %d", still, elapsed, max)
	}
	errs := len(o.log.lines(t, "request failed", ""))
	t.Logf("%d requests in %s: statuses %v, %d outage reports, %d error lines", workers*each, elapsed, statuses, still, errs)
	if max := observe.ErrorLinesPerSecond * (int(elapsed/time.Second) + 2); errs > max || errs == 0 {
		t.Errorf("%d error lines in %s, want 1 to %d", errs, elapsed, max)
	}
	// The database answers again: after OutageQuiet without failures, a success ends the outage.
	time.Sleep(observe.OutageQuiet + 100*time.Millisecond)
	o.get(t, "/readyz").expect(t, "readyz", http.StatusOK)
	ends := o.log.lines(t, "database available again", "")
	if len(ends) != 1 || ends[0]["failed_requests"] != float64(failed) {
		t.Errorf("outage end lines %v, want one counting %d requests", ends, failed)
	}
	if n := len(o.log.lines(t, "request", "")); n < workers*each {
		t.Errorf("%d access lines for %d requests", n, workers*each)
	}
	others := 0
	for _, m := range o.log.records(t) {
		if m["msg"] != "request" {
			others++
		}
	}
	if others > 1+still+errs+1 {
		t.Errorf("%d lines besides access lines", others)
	}
}

// grepLines returns the lines of s that contain sub, for failure messages.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
