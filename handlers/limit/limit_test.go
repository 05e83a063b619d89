package limit

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"credo/handlers/problem"
)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func TestParseRule(t *testing.T) {
	for in, want := range map[string]Rule{"10/s": {10, time.Second}, "60/m": {60, time.Minute}, " 5/h ": {5, time.Hour}, "off": {}, "OFF": {}} {
		got, err := ParseRule(in)
		if err != nil || got != want {
			t.Errorf("ParseRule(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "10", "0/s", "-1/m", "10/d", "x/s", "10/", "2000000/s"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		}
	}
}

// TestAllow: a key gets Burst requests at once, then 429s with Retry-After in whole seconds
// until its bucket refills; keys are independent; an off rule allows everything.
func TestAllow(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	l := New("token requests", Rule{Burst: 3, Per: time.Minute}, clk.Now)
	for i := 0; i < 3; i++ {
		if err := l.Allow("a"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	err := l.Allow("a")
	var p *problem.Problem
	if !errors.As(err, &p) || p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") != "20" {
		t.Fatalf("4th request: %v (%+v), want 429 with Retry-After 20", err, p)
	}
	if err := l.Allow("b"); err != nil {
		t.Errorf("another key: %v", err)
	}
	clk.now = clk.now.Add(19 * time.Second)
	if err := l.Allow("a"); err == nil {
		t.Error("allowed before Retry-After")
	} else if errors.As(err, &p); p.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q after 19 s, want 1", p.Header.Get("Retry-After"))
	}
	clk.now = clk.now.Add(time.Second)
	if err := l.Allow("a"); err != nil {
		t.Errorf("after Retry-After: %v", err)
	}
	off := New("x", Rule{}, clk.Now)
	for i := 0; i < 1000; i++ {
		if err := off.Allow("a"); err != nil {
			t.Fatal(err)
		}
	}
	// The problem is written as a 429 document with the header.
	rec := httptest.NewRecorder()
	problem.Write(rec, httptest.NewRequest("POST", "/v2/e01/security/tokens/generate", nil), p)
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("written: %d %v", rec.Code, rec.Header())
	}
}

// TestBucketsStayBounded: many distinct keys never grow the limiter past maxKeys.
func TestBucketsStayBounded(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	l := New("x", Rule{Burst: 1, Per: time.Second}, clk.Now)
	for i := 0; i < maxKeys+5000; i++ {
		_ = l.Allow(string(rune(i)) + "k")
		if i%50_000 == 0 {
			clk.now = clk.now.Add(2 * time.Second)
		}
	}
	if n := len(l.buckets); n > maxKeys {
		t.Errorf("%d buckets, want at most %d", n, maxKeys)
	}
}

func TestNewSet(t *testing.T) {
	s, err := NewSet("secret=5/m, export=off", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Secret.Rule() != (Rule{5, time.Minute}) || !s.Export.Rule().Off() || s.Credentials.Rule() != Defaults[Credentials] {
		t.Errorf("rules %v %v %v", s.Secret.Rule(), s.Export.Rule(), s.Credentials.Rule())
	}
	all, _ := NewSet("off", "", nil)
	for _, l := range []*Limiter{all.Credentials, all.Secret, all.V1Secret, all.Callback, all.Export} {
		if !l.Rule().Off() {
			t.Errorf("off left %v", l.Rule())
		}
	}
	for _, bad := range []string{"bogus=1/s", "secret", "secret=fast"} {
		if _, err := NewSet(bad, "", nil); err == nil {
			t.Errorf("NewSet(%q) accepted", bad)
		}
	}
	if _, err := NewSet("", "10.0.0.0/8,not-an-address", nil); err == nil {
		t.Error("a bad trusted proxy accepted")
	}
}

// TestClientAddress: X-Forwarded-For counts only behind a trusted proxy, read from the right.
func TestClientAddress(t *testing.T) {
	trusting, err := ParseProxies("10.0.0.0/8, 192.168.1.7, ::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		clients Clients
		remote  string
		xff     []string
		want    string
	}{
		{"no proxy trusted: the header is ignored", Clients{}, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{"untrusted peer: the header is ignored", trusting, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{"trusted peer: the client before it", trusting, "10.1.2.3:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a spoofed left entry is skipped", trusting, "10.1.2.3:4000", []string{"1.2.3.4, 198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"several headers", trusting, "192.168.1.7:80", []string{"1.2.3.4", "198.51.100.2"}, "198.51.100.2"},
		{"garbage stops at the last trusted hop", trusting, "10.1.2.3:4000", []string{"garbage, 10.4.4.4"}, "10.4.4.4"},
		{"all trusted", trusting, "10.1.2.3:4000", []string{"10.5.5.5"}, "10.5.5.5"},
		{"IPv6 loopback proxy", trusting, "[::1]:8080", []string{"2001:db8::1"}, "2001:db8::1"},
		{"IPv4-mapped peer", Clients{}, "[::ffff:203.0.113.9]:1", nil, "203.0.113.9"},
		{"a peer not written canonically", Clients{}, "[2001:DB8:0:0::1]:1", nil, "2001:db8::1"},
		{"a canonical IPv6 peer", Clients{}, "[2001:db8::7]:1", nil, "2001:db8::7"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := tc.clients.Address(r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
