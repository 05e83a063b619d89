package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Limits that keep a run bounded whatever the flags say.
const (
	// MaxConns caps the connections of one case.
	MaxConns = 256
	// MaxDuration caps the measured time plus the warm-up of one case.
	MaxDuration = 5 * time.Minute
	// requestTimeout fails a request that takes longer (the server is then broken, not slow).
	requestTimeout = 30 * time.Second
)

// Request is one HTTP request to send.
type Request struct {
	Method string
	// Target is the path and query, already escaped.
	Target string
	// Header lines, e.g. "Authorization: Bearer …"; Host is added.
	Header []string
	Body   []byte
}

// Append renders the request as HTTP/1.1 bytes for host.
func (r Request) Append(b []byte, host string) []byte {
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, r.Target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	for _, h := range r.Header {
		b = append(b, h...)
		b = append(b, "\r\n"...)
	}
	if r.Body != nil || r.Method == "POST" || r.Method == "PUT" || r.Method == "PATCH" {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(r.Body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, r.Body...)
}

// Case is one workload: Conns connections each send Next's requests back to back, for Warmup
// (not measured) and then Duration (measured).
type Case struct {
	Name     string
	Addr     string // host:port, on the loopback interface
	Conns    int
	Warmup   time.Duration
	Duration time.Duration
	// Next returns the next request of a connection; rng is that connection's own.
	Next func(rng *rand.Rand) Request
	// Want is the expected status; any other counts as an error.
	Want int
}

// Result summarises a measured case.
type Result struct {
	Name     string
	Requests int64
	Errors   int64
	// FirstError describes the first failure seen, for the report.
	FirstError string
	Duration   time.Duration
	RPS        float64
	P50, P99   time.Duration
	Max        time.Duration
	Mean       time.Duration
	Bytes      int64
	// Latencies are the measured requests' latencies in nanoseconds, sorted.
	Latencies []int64
}

// CheckLoopback refuses an address that is not on the loopback interface: the driver only
// loads servers on this machine.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("load: address %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" {
		ip = net.IPv4(127, 0, 0, 1)
	}
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("load: address %q is not a loopback address (127.0.0.1, ::1)", addr)
	}
	return nil
}

// Run drives c and returns its summary. It stops early when ctx ends.
func Run(ctx context.Context, c Case) (Result, error) {
	if err := CheckLoopback(c.Addr); err != nil {
		return Result{}, err
	}
	if c.Conns < 1 || c.Conns > MaxConns {
		return Result{}, fmt.Errorf("load: %s: %d connections; give 1 to %d", c.Name, c.Conns, MaxConns)
	}
	if c.Duration <= 0 || c.Warmup < 0 || c.Warmup+c.Duration > MaxDuration {
		return Result{}, fmt.Errorf("load: %s: warm-up %v + duration %v must be positive and at most %v", c.Name, c.Warmup, c.Duration, MaxDuration)
	}
	start := time.Now()
	measureFrom := start.Add(c.Warmup)
	end := measureFrom.Add(c.Duration)
	type worker struct {
		lat        []int64
		errors     int64
		firstError string
		bytes      int64
	}
	workers := make([]worker, c.Conns)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func(w *worker, seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
			cn := &conn{addr: c.Addr}
			defer cn.close()
			w.lat = make([]int64, 0, 1<<14)
			var buf []byte
			for ctx.Err() == nil {
				req := c.Next(rng)
				buf = req.Append(buf[:0], c.Addr)
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				resp, err := cn.do(buf, req.Method == "HEAD", false, t0.Add(requestTimeout))
				t1 := time.Now()
				measured := !t0.Before(measureFrom) && !t1.After(end)
				if err == nil && resp.status != c.Want {
					err = fmt.Errorf("%s %s: status %d, want %d", req.Method, req.Target, resp.status, c.Want)
				}
				if err != nil {
					if measured {
						w.errors++
					}
					if w.firstError == "" {
						w.firstError = err.Error()
					}
					if resp.status == 0 { // transport failure: back off a little
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				if measured {
					w.lat = append(w.lat, int64(t1.Sub(t0)))
					w.bytes += resp.bytes
				}
			}
		}(&workers[i], uint64(i)+1)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	var all []int64
	res := Result{Name: c.Name, Duration: c.Duration}
	for _, w := range workers {
		all = append(all, w.lat...)
		res.Errors += w.errors
		res.Bytes += w.bytes
		if res.FirstError == "" {
			res.FirstError = w.firstError
		}
	}
	summarise(&res, all)
	return res, nil
}

// Merge combines results of the same case measured in several rounds: requests, errors and
// time add up, and the percentiles are those of every round's latencies together.
func Merge(parts ...Result) Result {
	if len(parts) == 0 {
		return Result{}
	}
	out := Result{Name: parts[0].Name}
	var all []int64
	for _, p := range parts {
		out.Duration += p.Duration
		out.Errors += p.Errors
		out.Bytes += p.Bytes
		if out.FirstError == "" {
			out.FirstError = p.FirstError
		}
		all = append(all, p.Latencies...)
	}
	summarise(&out, all)
	return out
}

// summarise fills the counts and percentiles of res from latencies in nanoseconds.
func summarise(res *Result, lat []int64) {
	res.Requests = int64(len(lat))
	if res.Duration > 0 {
		res.RPS = float64(len(lat)) / res.Duration.Seconds()
	}
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.Latencies = lat
	var sum int64
	for _, l := range lat {
		sum += l
	}
	res.Mean = time.Duration(sum / int64(len(lat)))
	res.P50 = time.Duration(Percentile(lat, 50))
	res.P99 = time.Duration(Percentile(lat, 99))
	res.Max = time.Duration(lat[len(lat)-1])
}

// Percentile returns the p-th percentile (nearest rank) of sorted values.
func Percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

// Once sends one request on a new connection and returns its status and body, for the
// control requests of a harness (probes, tokens, exports) that are timed one by one.
func Once(addr string, req Request, timeout time.Duration) (int, []byte, error) {
	if err := CheckLoopback(addr); err != nil {
		return 0, nil, err
	}
	cn := &conn{addr: addr}
	defer cn.close()
	resp, err := cn.do(req.Append(nil, addr), req.Method == "HEAD", true, time.Now().Add(timeout))
	if err != nil {
		return 0, nil, err
	}
	return resp.status, resp.body, nil
}

// Fetch is Once that discards the body and returns its size: a download's time without
// keeping it in memory.
func Fetch(addr string, req Request, timeout time.Duration) (int, int64, error) {
	if err := CheckLoopback(addr); err != nil {
		return 0, 0, err
	}
	cn := &conn{addr: addr}
	defer cn.close()
	resp, err := cn.do(req.Append(nil, addr), req.Method == "HEAD", false, time.Now().Add(timeout))
	if err != nil {
		return 0, 0, err
	}
	return resp.status, resp.bytes, nil
}
