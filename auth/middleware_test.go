package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

func TestAuthenticate(t *testing.T) {
	clk := newClock()
	tokens := newTokens(t, clk.Now)
	cookies := newCookies(t, testKey, testEncKey, clk.Now)
	e01Cookie := SessionCookieName(DefaultCookieName, "e01")
	issue := func(partition string, lifetime int) (string, string) {
		s, c, err := tokens.Issue(Claims{Subject: "u1", Email: "a@example.com", Organization: "o1",
			Partition: partition, Roles: []string{"learners"}}, lifetime)
		if err != nil {
			t.Fatal(err)
		}
		return s, c.ID
	}
	cookie := func(partition string, expiry time.Duration) (*http.Cookie, string) {
		p := samplePayload()
		p.Partition, p.Expiry = partition, t0.Add(expiry)
		s, p, err := cookies.Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Cookie{Name: e01Cookie, Value: s}, p.Identifier
	}
	good, goodID := issue("e01", 3600)
	short, _ := issue("e01", 60)
	other, _ := issue("e02", 3600)
	revoked, revokedID := issue("e01", 3600)
	goodCookie, goodCookieID := cookie("e01", time.Hour)
	shortCookie, _ := cookie("e01", time.Minute)
	otherCookie, _ := cookie("e02", time.Hour)
	revokedCookie, revokedCookieID := cookie("e01", time.Hour)
	tamperedCookie := &http.Cookie{Name: e01Cookie, Value: flip(goodCookie.Value, 20)}
	// Credentials whose lineage is revoked: a token of a revoked secret, and cookies whose
	// secret, first token or parent cookie is revoked (their own identifiers are not).
	ofRevokedSecret, _, _ := tokens.Issue(Claims{Subject: "u1", Email: "a@example.com", Organization: "o1", Partition: "e01", Secret: "s-revoked"}, 3600)
	ofGoodSecret, _, _ := tokens.Issue(Claims{Subject: "u1", Email: "a@example.com", Organization: "o1", Partition: "e01", Secret: "s-good"}, 3600)
	lineageCookie := func(secret, token, parent string) *http.Cookie {
		p := samplePayload()
		p.Partition, p.Expiry, p.Secret, p.Token, p.Parent = "e01", t0.Add(time.Hour), secret, token, parent
		s, _, err := cookies.Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Cookie{Name: e01Cookie, Value: s}
	}
	clk.Advance(2 * time.Minute) // short and shortCookie are now expired

	store := &revocationStore{revoked: map[string]bool{"e01/" + revokedID: true, "e01/" + revokedCookieID: true,
		"e01/s-revoked": true, "e01/t-revoked": true, "e01/c-revoked": true}}
	accounts := AccountsFunc(func(_ context.Context, partition, user, org string) (Account, error) {
		switch user {
		case "u1":
			return Account{Operator: true, Roles: []string{"staff", "admins"}}, nil
		case "gone":
			return Account{}, fmt.Errorf("the user no longer exists: %w", ErrUnauthenticated)
		}
		return Account{}, errors.New("database is down")
	})
	goneToken, _, _ := tokens.Issue(Claims{Subject: "gone", Partition: "e01"}, 3600)
	brokenToken, _, _ := tokens.Issue(Claims{Subject: "broken", Partition: "e01"}, 3600)

	type want struct {
		user       string
		roles      []string
		operator   bool
		credential Credential
		tokenID    string
	}
	tests := []struct {
		name      string
		auth      *Authenticator
		header    string
		cookie    *http.Cookie
		partition string
		want      *want
		err       error // a category, or nil with failure set
		failure   bool  // a plain error, not a 401
		msg       string
	}{
		{name: "no credential", header: "", partition: "e01", err: ErrUnauthenticated, msg: "no credential"},
		{name: "bearer", header: "Bearer " + good, partition: "e01",
			want: &want{user: "u1", roles: []string{"learners"}, credential: CredentialBearer, tokenID: goodID}},
		{name: "scheme is case-insensitive", header: "bearer " + good, partition: "e01",
			want: &want{user: "u1", roles: []string{"learners"}, credential: CredentialBearer, tokenID: goodID}},
		{name: "basic scheme", header: "Basic dTpw", partition: "e01", err: ErrUnauthenticated, msg: "Bearer <token>"},
		{name: "bearer without token", header: "Bearer ", partition: "e01", err: ErrUnauthenticated, msg: "Bearer <token>"},
		{name: "bearer garbage", header: "Bearer xyz", partition: "e01", err: ErrUnauthenticated, msg: "malformed token"},
		{name: "bearer expired", header: "Bearer " + short, partition: "e01", err: ErrUnauthenticated, msg: "token expired"},
		{name: "bearer of another partition", header: "Bearer " + other, partition: "e01", err: ErrUnauthenticated, msg: "token of another partition"},
		{name: "bearer revoked", header: "Bearer " + revoked, partition: "e01", err: ErrUnauthenticated, msg: "token revoked"},
		{name: "bad bearer is not rescued by a good cookie", header: "Bearer " + short, cookie: goodCookie, partition: "e01",
			err: ErrUnauthenticated, msg: "token expired"},
		{name: "cookie", cookie: goodCookie, partition: "e01",
			want: &want{user: "u1", roles: []string{"staff"}, credential: CredentialCookie, tokenID: goodCookieID}},
		{name: "cookie expired", cookie: shortCookie, partition: "e01", err: ErrUnauthenticated, msg: "cookie expired"},
		{name: "cookie of another partition", cookie: otherCookie, partition: "e01", err: ErrUnauthenticated, msg: "cookie of another partition"},
		{name: "cookie revoked", cookie: revokedCookie, partition: "e01", err: ErrUnauthenticated, msg: "cookie revoked"},
		{name: "cookie tampered", cookie: tamperedCookie, partition: "e01", err: ErrUnauthenticated, msg: "cannot be decrypted"},
		{name: "bearer of a revoked secret", header: "Bearer " + ofRevokedSecret, partition: "e01", err: ErrUnauthenticated, msg: "was made from was revoked"},
		{name: "bearer of a good secret", header: "Bearer " + ofGoodSecret, partition: "e01",
			want: &want{user: "u1", roles: []string{}, credential: CredentialBearer}},
		{name: "cookie of a revoked secret", cookie: lineageCookie("s-revoked", "t-good", ""), partition: "e01", err: ErrUnauthenticated, msg: "was made from was revoked"},
		{name: "cookie of a revoked token", cookie: lineageCookie("s-good", "t-revoked", ""), partition: "e01", err: ErrUnauthenticated, msg: "was made from was revoked"},
		{name: "cookie of a revoked cookie", cookie: lineageCookie("s-good", "t-good", "c-revoked"), partition: "e01", err: ErrUnauthenticated, msg: "was made from was revoked"},
		{name: "cookie of a good lineage", cookie: lineageCookie("s-good", "t-good", "c-good"), partition: "e01",
			want: &want{user: "u1", roles: []string{"staff"}, credential: CredentialCookie}},
		{name: "cookie of another name", cookie: &http.Cookie{Name: "other", Value: goodCookie.Value}, partition: "e01",
			err: ErrUnauthenticated, msg: "no credential"},
		{name: "custom cookie name", auth: &Authenticator{Tokens: tokens, Cookies: cookies, CookieName: "sid"},
			cookie: &http.Cookie{Name: "__Host-sid-e01", Value: goodCookie.Value}, partition: "e01",
			want: &want{user: "u1", roles: []string{"staff"}, credential: CredentialCookie, tokenID: goodCookieID}},
		{name: "custom cookie name without the prefix", auth: &Authenticator{Tokens: tokens, Cookies: cookies, CookieName: "sid"},
			cookie: &http.Cookie{Name: "sid", Value: goodCookie.Value}, partition: "e01",
			err: ErrUnauthenticated, msg: "a session cookie named sid is no longer accepted"},
		{name: "cookie of the old name", cookie: &http.Cookie{Name: DefaultCookieName, Value: goodCookie.Value}, partition: "e01",
			err: ErrUnauthenticated, msg: "a session cookie named credo_session is no longer accepted"},
		{name: "cookie named for another partition", cookie: &http.Cookie{Name: SessionCookieName(DefaultCookieName, "e02"), Value: otherCookie.Value},
			partition: "e01", err: ErrUnauthenticated, msg: "no credential"},
		{name: "cookies not configured", auth: &Authenticator{Tokens: tokens}, cookie: goodCookie, partition: "e01",
			err: ErrUnauthenticated, msg: "no credential"},
		{name: "without Revocations a revoked token passes", auth: &Authenticator{Tokens: tokens}, header: "Bearer " + revoked, partition: "e01",
			want: &want{user: "u1", roles: []string{"learners"}, credential: CredentialBearer, tokenID: revokedID}},
		{name: "accounts supply operator and current roles",
			auth:   &Authenticator{Tokens: tokens, Revocations: store, Accounts: accounts},
			header: "Bearer " + good, partition: "e01",
			want: &want{user: "u1", roles: []string{"staff", "admins"}, operator: true, credential: CredentialBearer, tokenID: goodID}},
		{name: "accounts refuse a deleted user", auth: &Authenticator{Tokens: tokens, Accounts: accounts},
			header: "Bearer " + goneToken, partition: "e01", err: ErrUnauthenticated, msg: "no longer exists"},
		{name: "accounts failure is not a 401", auth: &Authenticator{Tokens: tokens, Accounts: accounts},
			header: "Bearer " + brokenToken, partition: "e01", failure: true, msg: "database is down"},
		{name: "revocation failure is not a 401", auth: &Authenticator{Tokens: tokens, Revocations: &revocationStore{fail: true}},
			header: "Bearer " + good, partition: "e01", failure: true, msg: "database is down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.auth
			if a == nil {
				a = &Authenticator{Tokens: tokens, Cookies: cookies, Revocations: store}
			}
			r := httptest.NewRequest(http.MethodGet, "/v2/e01/people", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			if tt.cookie != nil {
				r.AddCookie(tt.cookie)
			}
			p, err := a.Authenticate(r, tt.partition)
			if tt.failure {
				if err == nil || errors.Is(err, ErrUnauthenticated) {
					t.Fatalf("got %v; want a plain failure", err)
				}
				checkErr(t, err, err, tt.msg)
				return
			}
			checkErr(t, err, tt.err, tt.msg)
			if err != nil {
				return
			}
			w := tt.want
			if p.UserIdentifier != w.user || !slices.Equal(p.Roles, w.roles) || p.Operator != w.operator ||
				p.Credential != w.credential || (w.tokenID != "" && p.TokenID != w.tokenID) || p.Partition != "e01" ||
				p.OrganizationIdentifier != "o1" || p.Email != "a@example.com" {
				t.Fatalf("principal %+v; want %+v", p, w)
			}
		})
	}
}
