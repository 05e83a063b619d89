package auth

import (
	"context"
	"sync"
	"time"
)

// Revocations answers whether a token (by its jti) or a session cookie (by its Identifier) has
// been revoked. Another package implements it over the partition's database; it must answer
// from shared storage so that a revocation made on one process holds on all of them.
type Revocations interface {
	IsRevoked(ctx context.Context, partition, jti string) (bool, error)
}

// MaxRevocationTTL is the longest a RevocationCache keeps an answer, and so the longest a
// revoked token may still be accepted by a process after its revocation is stored. It is
// RevocationBound less the time a request takes, so that the documented bound holds end to end.
const MaxRevocationTTL = 1500 * time.Millisecond

// RevocationBound is the documented bound: a request sent this long after a revocation is
// stored is refused by every process sharing the database.
const RevocationBound = 2 * time.Second

// RevocationCache is a Revocations that remembers its inner store's answer per (partition, jti)
// for a short TTL, so that a busy client costs one revocation query per TTL rather than one per
// request. The price is bounded staleness: a revocation takes effect on every process within
// the TTL (at most MaxRevocationTTL), because each process asks the shared store again once
// its entry ages out; the process that revokes can call Forget to make it immediate there.
// Errors are not cached. Expired entries are swept once per TTL, so memory follows the number of
// distinct tokens seen in the last TTL. A RevocationCache is safe for concurrent use.
type RevocationCache struct {
	inner Revocations
	ttl   time.Duration
	clock func() time.Time

	mu      sync.Mutex
	entries map[revocationKey]revocationEntry
	sweepAt time.Time
}

type revocationKey struct{ partition, jti string }

type revocationEntry struct {
	revoked bool
	until   time.Time
}

var _ Revocations = (*RevocationCache)(nil)

// NewRevocationCache wraps inner with a cache of the given TTL, clamped to MaxRevocationTTL
// (and MaxRevocationTTL when not positive). clock is time.Now when nil.
func NewRevocationCache(inner Revocations, ttl time.Duration, clock func() time.Time) *RevocationCache {
	if ttl <= 0 || ttl > MaxRevocationTTL {
		ttl = MaxRevocationTTL
	}
	if clock == nil {
		clock = time.Now
	}
	return &RevocationCache{inner: inner, ttl: ttl, clock: clock, entries: map[revocationKey]revocationEntry{}}
}

// IsRevoked answers from the cache when its entry is younger than the TTL, otherwise from the
// inner store.
func (c *RevocationCache) IsRevoked(ctx context.Context, partition, jti string) (bool, error) {
	key := revocationKey{partition, jti}
	now := c.clock()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.revoked, nil
	}
	revoked, err := c.inner.IsRevoked(ctx, partition, jti)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !now.Before(c.sweepAt) {
		for k, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, k)
			}
		}
		c.sweepAt = now.Add(c.ttl)
	}
	c.entries[key] = revocationEntry{revoked: revoked, until: now.Add(c.ttl)}
	return revoked, nil
}

// Forget drops the cached answer for a jti, so that this process sees a revocation it has just
// stored at once.
func (c *RevocationCache) Forget(partition, jti string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, revocationKey{partition, jti})
}
