package security_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/engine"
	"credo/handlers/security"
	"credo/internal/testenv"
)

// TestWithdrawnAccess: a person archived or whose access is revoked, and a user archived or deleted, no
// longer authenticate — their tokens, their cookies, their secret and an operator acting for
// them are refused, and cookies/validate reports their cookie not valid, within
// security.AccountTTL — until the person is unarchived, access is granted
// again, or the user is unarchived. An ending still to come withdraws nothing yet.
func TestWithdrawnAccess(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			res, token := e.user(t, "", false)
			op, _ := e.user(t, res.OrganizationIdentifier, true)
			ctx := context.Background()
			var ck struct{ Token string }
			e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "cookie", http.StatusOK).json(t, &ck)
			cookie := []string{"Cookie", security.CookieName(e.partition) + "=" + ck.Token}
			set := func(name string, members map[string]any) {
				t.Helper()
				e.setOfUser(t, name, res.UserIdentifier, members)
			}
			// standing checks the token, the secret and an operator acting for the user.
			standing := func(what string, allowed bool, detail string) {
				t.Helper()
				body, _ := json.Marshal(map[string]any{"Secret": res.Secret})
				acting, _ := json.Marshal(map[string]any{"Secret": op.Secret, "Subject": res.UserIdentifier})
				use := e.do(t, "GET", "security/tokens/introspect", "", bearer(token)...)
				gen := e.do(t, "POST", "security/tokens/generate", string(body))
				act := e.do(t, "POST", "security/tokens/generate", string(acting))
				byCookie := e.do(t, "GET", "security/tokens/introspect", "", cookie...)
				var rep cookieReport
				e.do(t, "POST", "security/cookies/validate", ck.Token).expect(t, what+": validate the cookie", http.StatusOK).json(t, &rep)
				if rep.Valid != allowed || !allowed && !strings.Contains(rep.Reason, detail) {
					t.Errorf("%s: cookies/validate says Valid %v (%q), want %v saying %q", what, rep.Valid, rep.Reason, allowed, detail)
				}
				if allowed {
					byCookie.expect(t, what+": the cookie", http.StatusOK)
					use.expect(t, what+": the token", http.StatusOK)
					gen.expect(t, what+": the secret", http.StatusOK)
					act.expect(t, what+": an operator acting for the user", http.StatusOK)
					return
				}
				refused := []response{use.expect(t, what+": the token", http.StatusUnauthorized), gen.expect(t, what+": the secret", http.StatusUnauthorized),
					act.expect(t, what+": an operator acting for the user", http.StatusBadRequest), byCookie.expect(t, what+": the cookie", http.StatusUnauthorized)}
				for _, r := range refused {
					if d := r.detail(t); !strings.Contains(d, detail) {
						t.Errorf("%s: Detail %q, want it to say %q", what, d, detail)
					}
				}
				var p struct{ Errors map[string][]string }
				refused[2].json(t, &p)
				if len(p.Errors["Subject"]) != 1 {
					t.Errorf("%s: an operator acting for the user: Errors %v, want Subject named", what, p.Errors)
				}
			}
			now := e.clock.Now()
			standing("at first", true, "")

			set("Person", map[string]any{"IsArchived": true})
			standing("person archived", false, "is archived")
			set("Person", map[string]any{"IsArchived": false})
			standing("person unarchived", true, "")

			set("Person", map[string]any{"AccessRevoked": now.Add(time.Hour)})
			standing("access revoked in an hour", true, "")
			set("Person", map[string]any{"AccessRevoked": now.Add(-time.Hour)})
			standing("access revoked an hour ago", false, "had its access revoked on ")
			set("Person", map[string]any{"UserAccessGranted": now.Add(-2 * time.Hour)})
			standing("access granted before it was revoked", false, "had its access revoked on ")
			set("Person", map[string]any{"UserAccessGranted": now.Add(-time.Minute)})
			standing("access granted again since", true, "")

			set("User", map[string]any{"UtcArchived": now.Add(-time.Hour)})
			standing("user archived", false, "was archived on ")
			set("User", map[string]any{"UtcUnarchived": now.Add(-time.Minute)})
			standing("user unarchived since", true, "")
			set("User", map[string]any{"UtcArchived": now})
			standing("user archived again", false, "was archived on ")
			set("User", map[string]any{"UtcArchived": now.Add(time.Hour)})
			standing("user to be archived in an hour", true, "")

			// A user whose record is deleted while its person remains acts no more: its
			// token, cookie and secret are refused as tokens/generate refuses to issue it one.
			users := e.reg.MustByName("User")
			key, _ := users.Member("UserIdentifier")
			table := e.store.TableName(users)
			var saved []map[string]any
			if err := e.store.DB(ctx).Table(table).Where(`"`+key.Column+`" = ?`, res.UserIdentifier).Find(&saved).Error; err != nil || len(saved) != 1 {
				t.Fatalf("read the user: %v (%d rows)", err, len(saved))
			}
			if err := e.store.DB(ctx).Exec(`DELETE FROM `+table+` WHERE "`+key.Column+`" = ?`, res.UserIdentifier).Error; err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(security.AccountTTL + time.Second)
			standing("user deleted", false, "no longer exists")
			if err := e.store.DB(ctx).Table(table).Create(saved[0]).Error; err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(security.AccountTTL + time.Second)
			standing("user restored", true, "")
		})
	}
}

// TestActingCredentialsEndWithTheirOperator: a token an operator generated for another user
// (Subject or Agent), and the cookies made from it, hold only while the operator who
// generated it may still act as an operator: its person archived, no longer an operator, or
// its user archived, the operator's impersonations end with its own credentials (within
// security.AccountTTL), as revoking its secret would end them; restored, they hold again.
// The token a user generates from its own secret is unaffected.
func TestActingCredentialsEndWithTheirOperator(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			user, own := e.user(t, "", false)
			op, _ := e.user(t, user.OrganizationIdentifier, true)
			acting := map[string]string{}
			for _, member := range []string{"Subject", "Agent"} {
				body, _ := json.Marshal(map[string]any{"Secret": op.Secret, member: user.UserIdentifier})
				var tok struct{ AccessToken string }
				e.do(t, "POST", "security/tokens/generate", string(body)).expect(t, member, http.StatusOK).json(t, &tok)
				acting[member] = tok.AccessToken
			}
			var ck struct{ Token string }
			e.do(t, "POST", "security/cookies/generate", "", bearer(acting["Subject"])...).expect(t, "cookie", http.StatusOK).json(t, &ck)
			set := func(name string, members map[string]any) {
				t.Helper()
				e.setOfUser(t, name, op.UserIdentifier, members)
			}
			standing := func(what string, holds bool, detail string) {
				t.Helper()
				e.do(t, "GET", "security/tokens/introspect", "", bearer(own)...).expect(t, what+": the user's own token", http.StatusOK)
				var rep cookieReport
				e.do(t, "POST", "security/cookies/validate", ck.Token).expect(t, what+": validate the cookie", http.StatusOK).json(t, &rep)
				if rep.Valid != holds || !holds && !strings.Contains(rep.Reason, detail) {
					t.Errorf("%s: cookies/validate says Valid %v (%q), want %v saying %q", what, rep.Valid, rep.Reason, holds, detail)
				}
				uses := []response{
					e.do(t, "GET", "security/tokens/introspect", "", bearer(acting["Subject"])...),
					e.do(t, "GET", "security/tokens/introspect", "", bearer(acting["Agent"])...),
					e.do(t, "GET", "security/tokens/introspect", "", "Cookie", security.CookieName(e.partition)+"="+ck.Token),
				}
				for i, u := range uses {
					name := []string{"the Subject token", "the Agent token", "the cookie"}[i]
					if holds {
						u.expect(t, what+": "+name, http.StatusOK)
						continue
					}
					u.expect(t, what+": "+name, http.StatusUnauthorized)
					if d := u.detail(t); !strings.Contains(d, detail) {
						t.Errorf("%s: %s: Detail %q, want it to say %q", what, name, d, detail)
					}
				}
			}
			standing("at first", true, "")
			set("Person", map[string]any{"IsArchived": true})
			standing("operator's person archived", false, "is archived")
			set("Person", map[string]any{"IsArchived": false})
			standing("operator's person unarchived", true, "")
			set("Person", map[string]any{"IsOperator": false})
			standing("no longer an operator", false, "is no longer an operator")
			set("Person", map[string]any{"IsOperator": true})
			standing("an operator again", true, "")
			set("User", map[string]any{"UtcArchived": e.clock.Now().Add(-time.Hour)})
			standing("operator's user archived", false, "was archived on ")
		})
	}
}

// setOfUser writes members of the records of a group (Person, User) that belong to a user, as
// an administrator or a load would (a time.Time as the datetime it is), then moves the clock
// past the account cache.
func (e *env) setOfUser(t *testing.T, name, user string, members map[string]any) {
	t.Helper()
	r := e.reg.MustByName(name)
	cols := map[string]any{}
	for m, v := range members {
		f, _ := r.Member(m)
		if s, ok := v.(time.Time); ok {
			v = engine.DateTime{Time: s.UTC()}
		}
		cols[f.Column] = v
	}
	key, _ := r.Member("UserIdentifier")
	if err := e.store.DB(context.Background()).Table(e.store.TableName(r)).Where(`"`+key.Column+`" = ?`, user).Updates(cols).Error; err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(security.AccountTTL + time.Second)
}

// TestWithdrawnRefusalsAreCounted: a withdrawn user's secret (tokens/generate and version 1's
// secret authentication), token and cookie, and an operator's impersonating token once the
// operator lost its standing, are refusals like any other: each is counted in
// credo_auth_failures_total under its kind of credential (never "unknown") and logged.
func TestWithdrawnRefusalsAreCounted(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			user, token := e.user(t, "", false)
			op, _ := e.user(t, user.OrganizationIdentifier, true)
			var ck struct{ Token string }
			e.do(t, "POST", "security/cookies/generate", "", bearer(token)...).expect(t, "cookie", http.StatusOK).json(t, &ck)
			body, _ := json.Marshal(map[string]any{"Secret": op.Secret, "Subject": user.UserIdentifier})
			var acting struct{ AccessToken string }
			e.do(t, "POST", "security/tokens/generate", string(body)).expect(t, "acting", http.StatusOK).json(t, &acting)

			before := e.authFailures(t)
			e.setOfUser(t, "Person", op.UserIdentifier, map[string]any{"IsOperator": false})
			e.do(t, "GET", "security/tokens/introspect", "", bearer(acting.AccessToken)...).expect(t, "the operator's impersonation", http.StatusUnauthorized)
			e.setOfUser(t, "Person", user.UserIdentifier, map[string]any{"IsArchived": true})
			e.do(t, "POST", "security/tokens/generate", `{"Secret":"`+user.Secret+`"}`).expect(t, "the secret", http.StatusUnauthorized)
			e.do(t, "POST", "/api/registrations/count", "{}", bearer(user.Secret)...).expect(t, "version 1's secret", http.StatusUnauthorized)
			e.do(t, "GET", "security/tokens/introspect", "", bearer(token)...).expect(t, "the token", http.StatusUnauthorized)
			e.do(t, "GET", "security/tokens/introspect", "", "Cookie", security.CookieName(e.partition)+"="+ck.Token).expect(t, "the cookie", http.StatusUnauthorized)

			after := e.authFailures(t)
			for kind, n := range map[string]float64{"secret": 2, "bearer": 2, "cookie": 1, "unknown": 0} {
				if got := after[kind] - before[kind]; got != n {
					t.Errorf("refusals counted as %q: %v, want %v (all: %v)", kind, got, n, after)
				}
			}
			if got := strings.Count(e.log.String(), `"msg":"authentication failed"`); got != 5 {
				t.Errorf("%d refusals logged, want 5:\n%s", got, e.log.String())
			}
		})
	}
}

// TestActingCredentialsEndWithTheOperatorsPersonThere: an operator whose person in its
// secret's organization is archived, while it stays an operator through a person of another
// organization, may no longer act for others there: the tokens and cookies it generated for
// another user are refused (within security.AccountTTL), and it cannot generate new ones
// (403). Its own token still works, as an operator reading across organizations. Restored,
// its person lets them hold again.
func TestActingCredentialsEndWithTheOperatorsPersonThere(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			user, _ := e.user(t, "", false)
			org := user.OrganizationIdentifier
			email := "op-" + uuid.NewString()[:8] + "@example.com"
			op := e.secret(t, security.SecretOptions{Email: email, Organization: org, Operator: true})
			other := newOrg(t, e)
			e.secret(t, security.SecretOptions{Email: email, Organization: other, Operator: true})
			own := e.token(t, op.Secret)
			body, _ := json.Marshal(map[string]any{"Secret": op.Secret, "Subject": user.UserIdentifier})
			var tok struct{ AccessToken string }
			e.do(t, "POST", "security/tokens/generate", string(body)).expect(t, "generate", http.StatusOK).json(t, &tok)
			var ck struct{ Token string }
			e.do(t, "POST", "security/cookies/generate", "", bearer(tok.AccessToken)...).expect(t, "cookie", http.StatusOK).json(t, &ck)
			archive := func(archived bool) {
				t.Helper()
				r := e.reg.MustByName("Person")
				u, _ := r.Member("UserIdentifier")
				o, _ := r.Member("OrganizationIdentifier")
				a, _ := r.Member("IsArchived")
				err := e.store.DB(context.Background()).Table(e.store.TableName(r)).
					Where(`"`+u.Column+`" = ? AND "`+o.Column+`" = ?`, op.UserIdentifier, org).Update(a.Column, archived).Error
				if err != nil {
					t.Fatal(err)
				}
				e.clock.Advance(security.AccountTTL + time.Second)
			}
			standing := func(what string, holds bool) {
				t.Helper()
				var p struct{ Principal struct{ Operator bool } }
				e.do(t, "GET", "security/tokens/introspect", "", bearer(own)...).expect(t, what+": the operator's own token", http.StatusOK).json(t, &p)
				e.do(t, "GET", "directory/people/count?OrganizationIdentifier="+other, "", bearer(own)...).
					expect(t, what+": the operator's own token reading another organization", http.StatusOK)
				if !p.Principal.Operator {
					t.Errorf("%s: the operator's own token is no operator's", what)
				}
				var rep cookieReport
				e.do(t, "POST", "security/cookies/validate", ck.Token).expect(t, what+": validate the cookie", http.StatusOK).json(t, &rep)
				uses := []response{
					e.do(t, "GET", "security/tokens/introspect", "", bearer(tok.AccessToken)...),
					e.do(t, "GET", "security/tokens/introspect", "", "Cookie", security.CookieName(e.partition)+"="+ck.Token),
				}
				gen := e.do(t, "POST", "security/tokens/generate", string(body))
				if holds {
					uses[0].expect(t, what+": the Subject token", http.StatusOK)
					uses[1].expect(t, what+": the cookie", http.StatusOK)
					gen.expect(t, what+": generate", http.StatusOK)
					if !rep.Valid {
						t.Errorf("%s: cookies/validate says not valid (%q)", what, rep.Reason)
					}
					return
				}
				for i, u := range uses {
					u.expect(t, what+": "+[]string{"the Subject token", "the cookie"}[i], http.StatusUnauthorized)
					if d := u.detail(t); !strings.Contains(d, "may no longer act for others") || !strings.Contains(d, "is archived") {
						t.Errorf("%s: Detail %q, want it to say the operator may no longer act for others, its person archived", what, d)
					}
				}
				if rep.Valid || !strings.Contains(rep.Reason, "is archived") {
					t.Errorf("%s: cookies/validate says Valid %v (%q), want not valid, its person archived", what, rep.Valid, rep.Reason)
				}
				gen.expect(t, what+": generate", http.StatusForbidden)
				if d := gen.detail(t); !strings.Contains(d, "is archived") {
					t.Errorf("%s: generate: Detail %q, want it to say the person is archived", what, d)
				}
			}
			standing("at first", true)
			archive(true)
			standing("the operator's person in the secret's organization archived", false)
			archive(false)
			standing("unarchived", true)
		})
	}
}
