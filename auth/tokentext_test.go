package auth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// otherText returns another text of the same bytes as the unpadded base64url s: its last
// character with the unused bits set, which lax decoding reads as s. It fails the test when s
// has no unused bits (its length a multiple of 4).
func otherText(t *testing.T, s string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	unused := map[int]int{2: 4, 3: 2}[len(s)%4]
	if unused == 0 {
		t.Fatalf("%q has no unused bits", s)
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	other := s[:len(s)-1] + string(alphabet[i|(1<<unused-1)])
	a, _ := base64.RawURLEncoding.DecodeString(s)
	b, err := base64.RawURLEncoding.DecodeString(other)
	if other == s || err != nil || string(a) != string(b) {
		t.Fatalf("otherText(%q) = %q, not another text of the same bytes", s, other)
	}
	return other
}

// lineBroken returns the texts of s with a line break inserted, which encoding/base64 skips.
func lineBroken(s string) []string {
	return []string{s + "\n", s + "\r\n", "\n" + s, s[:len(s)/2] + "\r" + s[len(s)/2:]}
}

func TestDecodeTokenOneTextPerToken(t *testing.T) {
	raw := []byte("a token of 16 by") // 16 bytes: 22 characters, 4 unused bits
	s := base64.RawURLEncoding.EncodeToString(raw)
	if got, err := DecodeToken(s); err != nil || string(got) != string(raw) {
		t.Fatalf("DecodeToken(%q) = %q, %v", s, got, err)
	}
	for _, bad := range append(lineBroken(s), otherText(t, s), s+"=", s+"==", "a+b/", "") {
		if got, err := DecodeToken(bad); err == nil && string(got) == string(raw) {
			t.Errorf("DecodeToken(%q) read it as the token", bad)
		}
	}
}

// TestTokensHaveOneText: a cookie, a JWT and a JWT report refuse every other text of a good
// token (a line break anywhere, the unused bits of the last character set), which a lax
// base64 decoder would read as the token.
func TestTokensHaveOneText(t *testing.T) {
	cookies := newCookies(t, testKey, nil, fixed(t0))
	p := samplePayload()
	var cookie string
	for cookie == "" || len(cookie)%4 == 0 { // a text whose last character has unused bits
		var err error
		if cookie, _, err = cookies.Encode(p); err != nil {
			t.Fatal(err)
		}
		p.User += "x"
	}
	if _, err := cookies.Decode(cookie, "e01", false); err != nil {
		t.Fatalf("the cookie itself: %v", err)
	}
	for _, s := range append(lineBroken(cookie), otherText(t, cookie)) {
		_, err := cookies.Decode(s, "e01", false)
		checkErr(t, err, ErrUnauthenticated, "malformed cookie")
	}

	tokens := newTokens(t, fixed(t0))
	token := forge(t, jwt.SigningMethodHS256, testKey, goodClaims())
	if _, err := tokens.Verify(token, "e01"); err != nil {
		t.Fatalf("the token itself: %v", err)
	}
	signature := token[strings.LastIndexByte(token, '.')+1:]
	others := append(lineBroken(token), token[:len(token)-len(signature)]+otherText(t, signature))
	for _, s := range others {
		_, err := tokens.Verify(s, "e01")
		checkErr(t, err, ErrUnauthenticated, "malformed token")
		if _, err := tokens.Report(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("Report(%q) = %v, want ErrMalformed", s, err)
		}
	}
}
