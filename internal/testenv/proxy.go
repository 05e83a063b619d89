package testenv

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a target until it is frozen or down. Frozen, it accepts
// connections and keeps every connection open but forwards nothing, in either direction: to
// the client, the database has stopped answering, as a database host that hangs or a network
// that drops packets looks (never SIGSTOP the shared cluster). Down, it has closed every
// connection and refuses new ones, as a database server that stopped or a host that is gone
// looks; Up listens again on the same address.
type Proxy struct {
	ln     net.Listener
	addr   string
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
	closed bool
	// gen counts the times the proxy went down: a connection of an earlier generation is
	// not forwarded any more.
	gen   int
	conns []net.Conn
}

// NewProxy listens on a loopback port and forwards to target (host:port) until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, addr: ln.Addr().String(), target: target}
	p.cond = sync.NewCond(&p.mu)
	go p.accept(ln, 0)
	t.Cleanup(p.close)
	return p
}

// ProxyURL returns a PostgreSQL URL like raw whose host and port are a new Proxy's.
func ProxyURL(t testing.TB, raw string) (string, *Proxy) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(t, u.Host)
	u.Host = p.Addr()
	return u.String(), p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Down closes every connection and the listener: connecting is refused until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	ln, conns := p.ln, p.conns
	p.ln, p.conns = nil, nil
	p.gen++
	p.cond.Broadcast()
	p.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, c := range conns {
		c.Close()
	}
}

// Up listens again on the proxy's address after Down, and forwards new connections.
func (p *Proxy) Up(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil || p.closed {
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy up again on %s: %v", p.addr, err)
	}
	p.ln = ln
	go p.accept(ln, p.gen)
}

// Freeze stops forwarding; connections stay open.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// Thaw forwards again, new connections included. Bytes held while frozen are delivered.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	p.frozen = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// wait blocks while the proxy is frozen; it reports false once the proxy is closed or went
// down since generation gen.
func (p *Proxy) wait(gen int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.frozen && !p.closed && p.gen == gen {
		p.cond.Wait()
	}
	return !p.closed && p.gen == gen
}

// track keeps c to be closed by Down and at the end, unless the proxy is closed or went down
// since generation gen: then it closes c.
func (p *Proxy) track(c net.Conn, gen int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.gen != gen {
		c.Close()
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *Proxy) accept(ln net.Listener, gen int) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c, gen) {
			return
		}
		go p.serve(c, gen)
	}
}

func (p *Proxy) serve(c net.Conn, gen int) {
	if !p.wait(gen) {
		c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(up, gen) {
		c.Close()
		return
	}
	go p.pipe(up, c, gen)
	p.pipe(c, up, gen)
}

// pipe copies src to dst chunk by chunk, holding each chunk while the proxy is frozen.
func (p *Proxy) pipe(dst, src net.Conn, gen int) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait(gen) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	ln, conns := p.ln, p.conns
	p.ln, p.conns = nil, nil
	p.cond.Broadcast()
	p.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, c := range conns {
		c.Close()
	}
}
