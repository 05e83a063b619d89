package auth

import (
	"testing"
	"time"
)

// A token verified once is trusted from the cache, but never past its expiry nor in another
// partition, and a changed token string is verified afresh.
func TestVerifiedCache(t *testing.T) {
	c := newClock()
	tk, err := NewTokens(testKey, c.Now, "credo", "credo")
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := tk.Issue(Claims{Subject: "u1", Partition: "e01", Organization: "o1"}, 120)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := tk.Verify(token, "e01")
		checkErr(t, err, nil)
		if got.Subject != "u1" {
			t.Fatalf("claims %+v", got)
		}
	}
	if _, ok := tk.verified.get(token, c.Now()); !ok {
		t.Fatal("a verified token is not cached")
	}
	_, err = tk.Verify(token, "e02")
	checkErr(t, err, ErrUnauthenticated, "another partition")
	_, err = tk.Verify(token[:len(token)-2]+"xx", "e01")
	checkErr(t, err, ErrUnauthenticated)
	c.Advance(121*time.Second + TokenLeeway)
	_, err = tk.Verify(token, "e01")
	checkErr(t, err, ErrUnauthenticated, "expired")
}

// A request's token found in the cache costs no allocation: its claims are shared, not copied
// (they were 280 bytes a request).
func TestVerifiedCacheSharesClaims(t *testing.T) {
	tk, err := NewTokens(testKey, newClock().Now, "credo", "credo")
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := tk.Issue(Claims{Subject: "u1", Partition: "e01", Organization: "o1", Roles: []string{"r"}}, 120)
	if err != nil {
		t.Fatal(err)
	}
	first, err := tk.Verify(token, "e01")
	checkErr(t, err, nil)
	if allocs := testing.AllocsPerRun(100, func() {
		if c, err := tk.Verify(token, "e01"); err != nil || c != first {
			t.Fatalf("Verify = %p, %v; want the claims of the first call, %p", c, err, first)
		}
	}); allocs != 0 {
		t.Errorf("Verify of a cached token made %v allocations, want none", allocs)
	}
}
