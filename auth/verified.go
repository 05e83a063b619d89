package auth

import (
	"sync"
	"time"
)

// Limits of the verified-token cache.
const (
	// VerifiedTTL is the longest a verified token is trusted without checking its signature
	// again; its own expiry still applies at every use.
	VerifiedTTL = time.Minute
	// verifiedMax bounds the cache; when full it is emptied and refills with the tokens in use.
	verifiedMax = 10000
)

// verified remembers tokens whose signature and claims checked out, so that a client sending
// the same token on every request pays for the HMAC and the JSON decoding once a minute, not
// per request. A token is immutable text, so the claims found for it cannot change; expiry is
// checked on every hit and revocation is not cached here (the Authenticator asks Revocations).
type verified struct {
	mu      sync.Mutex
	entries map[string]verifiedEntry
}

type verifiedEntry struct {
	claims *Claims
	until  time.Time
}

// get returns the claims verified for token, shared by every caller: they are never changed.
func (v *verified) get(token string, now time.Time) (*Claims, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.entries[token]
	if !ok || !now.Before(e.until) {
		return nil, false
	}
	return e.claims, true
}

// put remembers the claims verified for token; c must not change afterwards.
func (v *verified) put(token string, c *Claims, now time.Time) {
	until := now.Add(VerifiedTTL)
	if c.Expires.Before(until) {
		until = c.Expires
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.entries == nil || len(v.entries) >= verifiedMax {
		v.entries = make(map[string]verifiedEntry, 64)
	}
	v.entries[token] = verifiedEntry{claims: c, until: until}
}
