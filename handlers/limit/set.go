package limit

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"time"
)

// The limits a Set holds, by their names in --rate-limits (CREDO_RATE_LIMITS).
const (
	// Credentials: security/tokens/generate and security/cookies/generate, per client address.
	Credentials = "credentials"
	// Secret: security/tokens/generate, per client secret presented.
	Secret = "secret"
	// V1Secret: version-1 requests authenticated by a raw client secret, per client address
	// and per secret. Every such request authenticates, so it is far higher than Secret.
	V1Secret = "v1secret"
	// Callback: the anonymous version-1 partner callback, per client address.
	Callback = "callback"
	// Export: progress/gradebooks/export, per caller (partition and user).
	Export = "export"
)

// Defaults are generous: a client that behaves never meets them; a script that guesses or
// floods does, within a minute.
var Defaults = map[string]Rule{
	Credentials: {Burst: 300, Per: time.Minute},
	Secret:      {Burst: 60, Per: time.Minute},
	V1Secret:    {Burst: 1200, Per: time.Minute},
	Callback:    {Burst: 600, Per: time.Minute},
	Export:      {Burst: 30, Per: time.Minute},
}

// Set is the process's abuse limits and the way it finds a request's client address.
type Set struct {
	Credentials, Secret, V1Secret, Callback, Export *Limiter
	Clients                                         Clients
}

// NewSet builds the limits from a spec, a comma list of `name=rule` (see ParseRule) where
// names not given keep their Defaults, or `off` for no limits at all, and the client address
// resolution from the trusted proxies (see ParseProxies). clock is time.Now when nil.
func NewSet(spec, trustedProxies string, clock func() time.Time) (*Set, error) {
	rules := map[string]Rule{}
	for k, v := range Defaults {
		rules[k] = v
	}
	spec = strings.TrimSpace(spec)
	if strings.EqualFold(spec, "off") {
		for k := range rules {
			rules[k] = Rule{}
		}
		spec = ""
	}
	for _, item := range strings.Split(spec, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if _, known := rules[name]; !ok || !known {
			return nil, fmt.Errorf("limit: %q is not name=rule with a name among %s", item, strings.Join(names(), ", "))
		}
		r, err := ParseRule(value)
		if err != nil {
			return nil, fmt.Errorf("limit: %s: %w", name, err)
		}
		rules[name] = r
	}
	clients, err := ParseProxies(trustedProxies)
	if err != nil {
		return nil, err
	}
	return &Set{
		Credentials: New("token and cookie requests", rules[Credentials], clock),
		Secret:      New("token requests with this secret", rules[Secret], clock),
		V1Secret:    New("requests authenticated by a client secret", rules[V1Secret], clock),
		Callback:    New("callbacks", rules[Callback], clock),
		Export:      New("exports", rules[Export], clock),
		Clients:     clients,
	}, nil
}

// Default returns the Defaults, trusting no proxy.
func Default() *Set {
	s, err := NewSet("", "", nil)
	if err != nil {
		panic(err) // the defaults are constants
	}
	return s
}

func names() []string {
	var out []string
	for k := range Defaults {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Clients finds a request's client address: the connection's peer (RemoteAddr), unless that
// peer is a trusted proxy, in which case X-Forwarded-For is read from the right, skipping
// trusted proxies, and the first address that is not one is the client. A header entry that
// is not an address stops the walk at the last trusted hop. Without trusted proxies the
// header is ignored, so a client cannot choose its own address to escape its limit.
type Clients struct{ trusted []netip.Prefix }

// ParseProxies reads a comma list of addresses and CIDR prefixes (--trusted-proxies).
func ParseProxies(s string) (Clients, error) {
	var c Clients
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		if !strings.Contains(item, "/") {
			a, err := netip.ParseAddr(item)
			if err != nil {
				return Clients{}, fmt.Errorf("limit: trusted proxy %q is not an address or a CIDR prefix", item)
			}
			item = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()).String()
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			return Clients{}, fmt.Errorf("limit: trusted proxy %q is not an address or a CIDR prefix", item)
		}
		c.trusted = append(c.trusted, p.Masked())
	}
	return c, nil
}

// Address returns the client address of a request (see Clients).
func (c Clients) Address(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !c.isTrusted(peer) {
		return canonical(peer, host)
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		a = a.Unmap()
		if !c.isTrusted(a) {
			return a.String()
		}
		peer = a
	}
	return peer.String()
}

// canonical returns a's text, which is host itself when host already is (the usual case: the
// peer's address as the kernel wrote it), without formatting it again.
func canonical(a netip.Addr, host string) string {
	var buf [64]byte
	if string(a.AppendTo(buf[:0])) == host {
		return host
	}
	return a.String()
}

func (c Clients) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
