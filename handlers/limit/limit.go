// Package limit bounds how often a client may call the operations an attacker would repeat:
// token buckets per key (a client address, a secret, a caller), refused with a 429 problem
// that says when to retry.
package limit

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"credo/handlers/problem"
)

// Rule is a token bucket: Burst requests at once, refilled at Burst per Per. The zero Rule
// limits nothing ("off").
type Rule struct {
	Burst int
	Per   time.Duration
}

// Off reports whether the rule limits nothing.
func (r Rule) Off() bool { return r.Burst <= 0 || r.Per <= 0 }

func (r Rule) String() string {
	if r.Off() {
		return "off"
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	return strconv.Itoa(r.Burst) + "/" + unit
}

// ParseRule reads `N/s`, `N/m` or `N/h` (N requests at once, refilled at N per second, minute
// or hour), or `off`.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return Rule{}, nil
	}
	n, unit, ok := strings.Cut(s, "/")
	burst, err := strconv.Atoi(n)
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	if !ok || err != nil || burst < 1 || burst > 1_000_000 || per == 0 {
		return Rule{}, fmt.Errorf("limit: %q is not N/s, N/m, N/h (N from 1 to 1000000) or off", s)
	}
	return Rule{Burst: burst, Per: per}, nil
}

// maxKeys bounds the buckets a Limiter keeps. Past it, buckets that have refilled (and so
// hold nothing a new bucket would not) are dropped; if all are in use, every bucket is, which
// can only reset limits for the keys then in use.
const maxKeys = 100_000

// Limiter keeps one token bucket per key. Build it with New; a Limiter is safe for concurrent
// use.
type Limiter struct {
	name  string
	rule  Rule
	clock func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// New returns a limiter named for its problem documents (e.g. "token requests"), applying
// rule per key; clock is time.Now when nil.
func New(name string, rule Rule, clock func() time.Time) *Limiter {
	if clock == nil {
		clock = time.Now
	}
	return &Limiter{name: name, rule: rule, clock: clock, buckets: map[string]*bucket{}}
}

// Allow takes one request from key's bucket. When the bucket is empty it takes nothing and
// returns a 429 problem whose Retry-After header is the whole seconds until a request is
// allowed again; otherwise nil. An off rule allows everything.
func (l *Limiter) Allow(key string) error {
	if l.rule.Off() {
		return nil
	}
	now := l.clock()
	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxKeys {
			l.sweep(now)
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(float64(l.rule.Burst)/l.rule.Per.Seconds()), l.rule.Burst)}
		l.buckets[key] = b
	}
	b.last = now
	res := b.lim.ReserveN(now, 1)
	delay := res.DelayFrom(now)
	if delay > 0 {
		res.CancelAt(now)
	}
	l.mu.Unlock()
	if delay <= 0 {
		return nil
	}
	secs := int(math.Ceil(delay.Seconds()))
	p := problem.New(http.StatusTooManyRequests, "Too many %s from this client: at most %d per %s. Retry in %d s.",
		l.name, l.rule.Burst, perText(l.rule.Per), secs)
	p.Header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return p
}

// sweep drops the buckets idle long enough to have refilled; the caller holds mu.
func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.last) >= l.rule.Per {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxKeys {
		l.buckets = map[string]*bucket{}
	}
}

func perText(d time.Duration) string {
	switch d {
	case time.Second:
		return "second"
	case time.Hour:
		return "hour"
	}
	return "minute"
}
