package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BackendHeader pins a request to one backend (its index) when sent to the proxy, and names
// the backend that served an answer.
const BackendHeader = "X-Cluster-Backend"

// Proxy is a round-robin reverse proxy over credo processes, as a load balancer in front of
// replicas. A request goes to the next backend in turn that is not known to be unready; when
// the connection to it is refused (a process that stopped listening), the request has not
// been sent and goes to the next one: Retried counts those. With a readiness path, each
// backend is probed every ProbeEvery and skipped while it answers anything but 200.
type Proxy struct {
	*httptest.Server
	// Retried counts requests sent again to another backend after a refused connection.
	Retried atomic.Int64
	// Resent counts requests that net/http's transport sent again by itself on a new
	// connection to the same backend: it does so when a kept-alive connection turns out to be
	// closed before any byte of the request was written (any method), or, for GET and HEAD,
	// before any byte of the answer arrived.
	Resent atomic.Int64

	backends []*url.URL
	ready    []atomic.Bool
	served   []atomic.Int64
	next     atomic.Uint64
	rp       *httputil.ReverseProxy
}

// ProbeEvery is how often the proxy probes its backends' readiness.
const ProbeEvery = 100 * time.Millisecond

// NewProxy starts a proxy over the backends' root URLs. ready is the readiness path probed
// ("" to probe nothing: every backend is taken as ready). It stops when the test ends.
func NewProxy(t testing.TB, ready string, backends ...string) *Proxy {
	t.Helper()
	p := &Proxy{ready: make([]atomic.Bool, len(backends)), served: make([]atomic.Int64, len(backends))}
	for i, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		p.backends = append(p.backends, u)
		p.ready[i].Store(true)
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetXForwarded() },
		Transport: p,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "proxy: %v\n", err)
		},
	}
	p.Server = httptest.NewServer(p.rp)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if ready != "" {
		wg.Go(func() { p.probe(ctx, ready) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		p.Close()
	})
	return p
}

// Served returns how many answers backend i gave.
func (p *Proxy) Served(i int) int64 { return p.served[i].Load() }

// Ready reports whether backend i answered its last readiness probe with 200.
func (p *Proxy) Ready(i int) bool { return p.ready[i].Load() }

// probe polls every backend's readiness path until ctx ends.
func (p *Proxy) probe(ctx context.Context, path string) {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(ProbeEvery)
	defer tick.Stop()
	for {
		for i, b := range p.backends {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.String()+path, nil)
			res, err := client.Do(req)
			ok := err == nil && res.StatusCode == http.StatusOK
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			p.ready[i].Store(ok)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// order returns the backends to try for a request: the pinned one, or every backend from the
// next in turn, ready ones first.
func (p *Proxy) order(r *http.Request) ([]int, error) {
	if pin := r.Header.Get(BackendHeader); pin != "" {
		i, err := strconv.Atoi(pin)
		if err != nil || i < 0 || i >= len(p.backends) {
			return nil, fmt.Errorf("proxy: no backend %q", pin)
		}
		return []int{i}, nil
	}
	n := len(p.backends)
	start := int(p.next.Add(1)-1) % n
	var ready, unready []int
	for k := range n {
		i := (start + k) % n
		if p.ready[i].Load() {
			ready = append(ready, i)
		} else {
			unready = append(unready, i)
		}
	}
	return append(ready, unready...), nil
}

// RoundTrip sends the request to a backend, and to the next one when the connection is
// refused. The body is read first so that it can be sent again.
func (p *Proxy) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		r.Body.Close()
	}
	order, err := p.order(r)
	if err != nil {
		return nil, err
	}
	r.Header.Del(BackendHeader)
	var last error
	for k, i := range order {
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host = p.backends[i].Scheme, p.backends[i].Host, p.backends[i].Host
		out.Body = io.NopCloser(bytes.NewReader(body))
		if body == nil {
			out.Body = nil
		}
		var conns atomic.Int64
		out = out.WithContext(httptrace.WithClientTrace(out.Context(), &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { conns.Add(1) },
		}))
		res, err := http.DefaultTransport.RoundTrip(out)
		if n := conns.Load(); n > 1 {
			p.Resent.Add(n - 1)
		}
		if err == nil {
			p.served[i].Add(1)
			res.Header.Set(BackendHeader, strconv.Itoa(i))
			return res, nil
		}
		last = err
		if !refused(err) {
			return nil, err
		}
		if k+1 < len(order) {
			p.Retried.Add(1)
		}
	}
	return nil, last
}

// refused reports whether err is a connection that was never made, so that the request was
// not sent and may go elsewhere whatever its method.
func refused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial"
}
