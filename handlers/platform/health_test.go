package platform_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"credo/handlers/platform"
	"credo/internal/testenv"
)

func TestHealth(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			store := openStore(t, b.URL)
			routes := platform.Routes(platform.Config{Version: "v25.2.3", Environments: map[string]string{store.Partition: "Test Environment"}})
			w := call(t, routes, store, nil, "platform/health")
			if w.Code != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", w.Code, w.Body)
			}
			var got platform.Health
			decode(t, w, &got)
			want := platform.Health{Status: "Healthy", Version: "v25.2.3",
				Env: platform.Environment{Name: "Test Environment", Slug: store.Partition}, Database: "ok"}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
		})
	}
}

func TestHealthEnvironmentDefaultsToSlug(t *testing.T) {
	store := openStore(t, testenv.Backends(t)[0].URL)
	w := call(t, platform.Routes(platform.Config{}), store, nil, "platform/health")
	var got platform.Health
	decode(t, w, &got)
	if got.Env.Name != store.Partition || got.Version != "dev" {
		t.Errorf("got %+v, want Environment.Name %q and Version dev", got, store.Partition)
	}
}

// TestHealthPostgresOutage cuts the connection between the store and PostgreSQL with a proxy,
// without touching the shared cluster: health answers 503 within HealthTimeout, then 200 again
// on the same store once the proxy forwards again.
func TestHealthPostgresOutage(t *testing.T) {
	pg := os.Getenv("CREDO_TEST_POSTGRES")
	if pg == "" {
		t.Skip("set CREDO_TEST_POSTGRES to run")
	}
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, u.Host)
	u.Host = px.addr()
	store := openStore(t, u.String())
	routes := platform.Routes(platform.Config{Version: "v1.0.0"})

	health := func(want int) {
		t.Helper()
		start := time.Now()
		w := call(t, routes, store, nil, "platform/health")
		took := time.Since(start)
		var got platform.Health
		decode(t, w, &got)
		wantDB := map[int]string{http.StatusOK: "ok", http.StatusServiceUnavailable: "unreachable"}[want]
		if w.Code != want || got.Database != wantDB {
			t.Fatalf("status %d Database %q, want %d %q", w.Code, got.Database, want, wantDB)
		}
		// The slack is for a loaded machine; without the bound a hung database would hold the
		// check for the statement timeout (engine.DefaultTimeout, 10 s) or forever.
		if took > platform.HealthTimeout+1500*time.Millisecond {
			t.Errorf("health took %v, want at most about %v", took, platform.HealthTimeout)
		}
	}
	health(http.StatusOK)
	for _, mode := range []string{"refuse", "hang"} {
		t.Run(mode, func(t *testing.T) {
			px.cut(mode == "hang")
			health(http.StatusServiceUnavailable)
			health(http.StatusServiceUnavailable)
			px.restore()
			health(http.StatusOK)
			health(http.StatusOK)
		})
	}
}

// proxy forwards TCP connections to a target until cut: then it closes every open connection
// and either drops new ones at once (refuse) or holds them open without answering (hang).
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	hang  bool
	conns map[net.Conn]bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.handle(c)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		p.closeAll()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) handle(c net.Conn) {
	p.mu.Lock()
	down, hang := p.down, p.hang
	if down && hang {
		p.conns[c] = true // held until restore or cleanup, never answered
	}
	p.mu.Unlock()
	if down {
		if !hang {
			_ = c.Close()
		}
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
	}
	go pipe(up, c)
	go pipe(c, up)
}

func (p *proxy) cut(hang bool) {
	p.mu.Lock()
	p.down, p.hang = true, hang
	p.mu.Unlock()
	p.closeAll()
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
	p.closeAll()
}

func (p *proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}
