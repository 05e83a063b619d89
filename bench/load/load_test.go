package load

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatus(t *testing.T) {
	m, err := ParseStatus([]byte("Name:\tcredo\nVmPeak:\t 1000 kB\nVmHWM:\t   40960 kB\nVmRSS:\t   20480 kB\nThreads:\t7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 20<<20 || m.Peak != 40<<20 {
		t.Errorf("got %+v, want RSS 20 MiB and Peak 40 MiB", m)
	}
	if _, err := ParseStatus([]byte("VmRSS:\t 12 MB\nVmHWM:\t1 kB\n")); err == nil {
		t.Error("a unit other than kB was accepted")
	}
	if _, err := ParseStatus([]byte("Name:\tx\n")); err == nil {
		t.Error("a status without VmRSS was accepted")
	}
}

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 250 and stime 50 ticks.
	line := "4242 (credo (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 100 1000000 2000\n"
	got, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if got != 3*time.Second {
		t.Errorf("CPU %v, want 3s", got)
	}
	if _, err := ParseStat([]byte("4242 (credo) S 1 2")); err == nil {
		t.Error("a short stat was accepted")
	}
	self, err := ReadCPU(os.Getpid())
	if err != nil || self < 0 {
		t.Errorf("own CPU: %v, %v", self, err)
	}
}

func TestPercentileAndMerge(t *testing.T) {
	lat := make([]int64, 100)
	for i := range lat {
		lat[i] = int64(i + 1)
	}
	for _, tc := range []struct {
		p    float64
		want int64
	}{{p: 50, want: 50}, {p: 99, want: 99}, {p: 100, want: 100}, {p: 1, want: 1}} {
		if got := Percentile(lat, tc.p); got != tc.want {
			t.Errorf("Percentile(%v) = %d, want %d", tc.p, got, tc.want)
		}
	}
	a := Result{Name: "W1", Duration: time.Second, Latencies: lat[:50]}
	b := Result{Name: "W1", Duration: time.Second, Latencies: lat[50:], Errors: 2}
	m := Merge(a, b)
	if m.Requests != 100 || m.RPS != 50 || m.Errors != 2 || m.P50 != 50 || m.P99 != 99 {
		t.Errorf("Merge = %+v", m)
	}
}

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "localhost:1": true, "10.0.0.1:80": false, "example.com:80": false} {
		if err := CheckLoopback(addr); (err == nil) != ok {
			t.Errorf("CheckLoopback(%s) = %v", addr, err)
		}
	}
}

func TestRequestAppend(t *testing.T) {
	got := string(Request{Method: "POST", Target: "/x?a=1", Header: []string{"A: b"}, Body: []byte("{}")}.Append(nil, "h:1"))
	want := "POST /x?a=1 HTTP/1.1\r\nHost: h:1\r\nA: b\r\nContent-Length: 2\r\n\r\n{}"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRun drives a tiny server for a moment: fixed-length and chunked bodies, HEAD, and a
// status other than the wanted one counted as an error.
func TestRun(t *testing.T) {
	big := strings.Repeat("x", 10_000) // large enough for net/http to chunk it
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small":
			w.Write([]byte("ok"))
		case "/big":
			w.Write([]byte(big))
			w.(http.Flusher).Flush()
			w.Write([]byte(big))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	paths := []string{"/small", "/big"}
	res, err := Run(context.Background(), Case{Name: "t", Addr: addr, Conns: 2, Duration: 200 * time.Millisecond, Want: 200,
		Next: func(rng *rand.Rand) Request { return Request{Method: "GET", Target: paths[rng.IntN(2)]} }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != 0 || res.P99 < res.P50 {
		t.Errorf("Run = %+v", res)
	}
	status, body, err := Once(addr, Request{Method: "GET", Target: "/big"}, time.Second)
	if err != nil || status != 200 || len(body) != 2*len(big) {
		t.Errorf("Once /big = %d, %d bytes, %v", status, len(body), err)
	}
	status, _, err = Once(addr, Request{Method: "HEAD", Target: "/small"}, time.Second)
	if err != nil || status != 200 {
		t.Errorf("Once HEAD = %d, %v", status, err)
	}
	res, err = Run(context.Background(), Case{Name: "t", Addr: addr, Conns: 1, Duration: 50 * time.Millisecond, Want: 200,
		Next: func(*rand.Rand) Request { return Request{Method: "GET", Target: "/missing"} }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors == 0 || res.FirstError == "" {
		t.Errorf("a 404 was not counted as an error: %+v", res)
	}
}
