package auth

import (
	"context"
	"errors"
	"testing"
	"time"
)

// revocationStore is an in-memory Revocations that counts its queries.
type revocationStore struct {
	revoked map[string]bool // partition + "/" + jti
	calls   int
	fail    bool
}

func (s *revocationStore) IsRevoked(_ context.Context, partition, jti string) (bool, error) {
	s.calls++
	if s.fail {
		return false, errors.New("database is down")
	}
	return s.revoked[partition+"/"+jti], nil
}

func TestRevocationCache(t *testing.T) {
	type step struct {
		advance   time.Duration
		revoke    string // jti to revoke in the store before asking
		forget    bool   // call Forget for jti before asking
		fail      bool
		jti       string
		want      bool
		wantErr   bool
		wantCalls int // store queries so far
	}
	tests := []struct {
		name  string
		ttl   time.Duration
		steps []step
	}{
		{name: "answers are cached for the TTL", ttl: time.Second, steps: []step{
			{jti: "a", wantCalls: 1},
			{advance: 999 * time.Millisecond, jti: "a", wantCalls: 1},
			{advance: time.Millisecond, jti: "a", wantCalls: 2},
		}},
		{name: "a revocation takes effect once the entry ages out", ttl: 2 * time.Second, steps: []step{
			{jti: "a", wantCalls: 1},
			{advance: time.Second, revoke: "a", jti: "a", want: false, wantCalls: 1},
			{advance: time.Second, jti: "a", want: true, wantCalls: 2},
		}},
		{name: "TTL is clamped to MaxRevocationTTL", ttl: time.Hour, steps: []step{
			{jti: "a", wantCalls: 1},
			{advance: MaxRevocationTTL, revoke: "a", jti: "a", want: true, wantCalls: 2},
		}},
		{name: "zero TTL means MaxRevocationTTL", ttl: 0, steps: []step{
			{jti: "a", wantCalls: 1},
			{advance: MaxRevocationTTL - time.Millisecond, jti: "a", wantCalls: 1},
			{advance: time.Millisecond, jti: "a", wantCalls: 2},
		}},
		{name: "Forget makes a revocation immediate", ttl: 2 * time.Second, steps: []step{
			{jti: "a", wantCalls: 1},
			{revoke: "a", forget: true, jti: "a", want: true, wantCalls: 2},
		}},
		{name: "entries are per jti", ttl: 2 * time.Second, steps: []step{
			{jti: "a", wantCalls: 1},
			{revoke: "b", jti: "b", want: true, wantCalls: 2},
			{jti: "a", wantCalls: 2},
		}},
		{name: "errors are not cached", ttl: 2 * time.Second, steps: []step{
			{fail: true, jti: "a", wantErr: true, wantCalls: 1},
			{jti: "a", wantCalls: 2},
			{jti: "a", wantCalls: 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			store := &revocationStore{revoked: map[string]bool{}}
			c := NewRevocationCache(store, tt.ttl, clk.Now)
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				if s.revoke != "" {
					store.revoked["e01/"+s.revoke] = true
				}
				if s.forget {
					c.Forget("e01", s.jti)
				}
				store.fail = s.fail
				got, err := c.IsRevoked(context.Background(), "e01", s.jti)
				if (err != nil) != s.wantErr || got != s.want || store.calls != s.wantCalls {
					t.Fatalf("step %d: got %v, %v after %d queries; want %v, error %v after %d",
						i, got, err, store.calls, s.want, s.wantErr, s.wantCalls)
				}
			}
		})
	}
	t.Run("partitions are separate", func(t *testing.T) {
		store := &revocationStore{revoked: map[string]bool{"e02/a": true}}
		c := NewRevocationCache(store, time.Second, newClock().Now)
		if got, _ := c.IsRevoked(context.Background(), "e01", "a"); got {
			t.Fatal("e01/a revoked")
		}
		if got, _ := c.IsRevoked(context.Background(), "e02", "a"); !got {
			t.Fatal("e02/a not revoked")
		}
	})
	t.Run("expired entries are swept", func(t *testing.T) {
		clk := newClock()
		c := NewRevocationCache(&revocationStore{}, time.Second, clk.Now)
		for _, jti := range []string{"a", "b", "c"} {
			_, _ = c.IsRevoked(context.Background(), "e01", jti)
		}
		clk.Advance(2 * time.Second)
		_, _ = c.IsRevoked(context.Background(), "e01", "d")
		if n := len(c.entries); n != 1 {
			t.Fatalf("%d entries after the sweep; want 1", n)
		}
	})
}
