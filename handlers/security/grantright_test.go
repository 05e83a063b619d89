package security_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"credo/auth"
	"credo/internal/testenv"
)

// TestGrantRightReadInTheWrite (decisions §7): the right to change permissions at all — the
// route's Create, Write or Delete on security/permissions — is read in the write's
// transaction, as the flags a grant gives are, not taken from the decision cache. A caller
// whose rights there were revoked a moment ago (its decision still cached: the test clock
// does not move) can no longer create, change or delete a grant, though it still holds
// every flag the grant gives.
func TestGrantRightReadInTheWrite(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			caller, token := e.user(t, "", false)
			_, opToken := e.user(t, "", true)
			org := caller.OrganizationIdentifier
			g := e.group(t, org, "Granters "+caller.UserIdentifier[:8])
			e.member(t, caller.UserIdentifier, g, org)
			right := e.create(t, "Permission", map[string]any{"GroupIdentifier": g, "ObjectIdentifier": auth.ObjectID("security/permissions").String(),
				"AllowRead": true, "AllowCreate": true, "AllowWrite": true, "AllowDelete": true})
			e.grant(t, g, []string{"directory/people"}, auth.Read)
			gr := e.group(t, org, "Grantees "+caller.UserIdentifier[:8])
			h := bearer(token)

			var made map[string]any
			e.do(t, "POST", "security/permissions", permissionBody(gr, "directory/people", auth.Read), h...).
				expect(t, "grant while holding the right", http.StatusCreated).json(t, &made)
			item := "security/permissions/" + made["PermissionIdentifier"].(string)
			e.do(t, "PATCH", item, `{"ObjectType":"Resource"}`, h...).expect(t, "change while holding the right", http.StatusOK)

			e.do(t, "DELETE", "security/permissions/"+right["PermissionIdentifier"].(string), "", bearer(opToken)...).
				expect(t, "the operator revokes the caller's rights on permissions", http.StatusOK)
			for _, c := range []struct{ method, path, body, flag string }{
				{"POST", "security/permissions", permissionBody(gr, "security/users"), "Create"},
				{"PATCH", item, `{"ObjectType":"Resource"}`, "Write"},
				{"PUT", item, permissionBody(gr, "directory/people", auth.Read), "Write"},
				{"DELETE", item, "", "Delete"},
			} {
				res := e.do(t, c.method, c.path, c.body, h...).expect(t, c.method+" after the revocation", http.StatusForbidden)
				if want := fmt.Sprintf(`the %s permission on "security/permissions" is not granted to the caller`, c.flag); res.detail(t) != want {
					t.Errorf("%s after the revocation: Detail %q, want %q", c.method, res.detail(t), want)
				}
			}
			e.do(t, "GET", item, "", bearer(opToken)...).expect(t, "the grant is as it was", http.StatusOK)
		})
	}
}

// TestGrantRacingItsRevocation (decisions §7, STYLE 22): grants sent by real goroutines while
// an operator revokes the grantor's right to grant. Those sent before the revocation answered
// may be taken; every one sent after it is refused, on every store, though the caller's
// decision stays cached (the test clock does not move). Counted, so that a run that sent none
// after the revocation fails rather than passes.
func TestGrantRacingItsRevocation(t *testing.T) {
	const workers, groups = 4, 160
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			caller, token := e.user(t, "", false)
			_, opToken := e.user(t, "", true)
			org := caller.OrganizationIdentifier
			g := e.group(t, org, "Granters "+caller.UserIdentifier[:8])
			e.member(t, caller.UserIdentifier, g, org)
			right := e.create(t, "Permission", map[string]any{"GroupIdentifier": g, "ObjectIdentifier": auth.ObjectID("security/permissions").String(),
				"AllowRead": true, "AllowCreate": true})
			e.grant(t, g, []string{"directory/people"}, auth.Read)
			grantees := make([]string, groups)
			for i := range grantees {
				grantees[i] = e.group(t, org, fmt.Sprintf("Grantee %d %s", i, caller.UserIdentifier[:8]))
			}
			e.do(t, "GET", "security/permissions?Take=1", "", bearer(token)...).expect(t, "the caller's decision is cached", http.StatusOK)

			var next, before, after, takenAfter atomic.Int32
			revoked := make(chan struct{})
			var wg sync.WaitGroup
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1)) - 1
						if i >= groups {
							return
						}
						sentAfter := false
						select {
						case <-revoked:
							sentAfter = true
						default:
						}
						status := e.do(t, "POST", "security/permissions", permissionBody(grantees[i], "directory/people", auth.Read), bearer(token)...).status
						switch {
						case sentAfter:
							after.Add(1)
							if status != http.StatusForbidden {
								takenAfter.Add(1)
							}
						case status == http.StatusCreated || status == http.StatusForbidden:
							before.Add(1)
						default:
							t.Errorf("grant %d: status %d", i, status)
						}
					}
				}()
			}
			for next.Load() < groups/4 {
				e.do(t, "GET", "security/permissions/count", "", bearer(opToken)...)
			}
			e.do(t, "DELETE", "security/permissions/"+right["PermissionIdentifier"].(string), "", bearer(opToken)...).
				expect(t, "revoke the caller's right to grant", http.StatusOK)
			close(revoked)
			wg.Wait()
			t.Logf("grants sent before the revocation answered: %d; after: %d, taken: %d", before.Load(), after.Load(), takenAfter.Load())
			if takenAfter.Load() > 0 {
				t.Errorf("%d of %d grants sent after the revocation answered were not refused", takenAfter.Load(), after.Load())
			}
			if after.Load() < groups/4 {
				t.Errorf("only %d grants were sent after the revocation; the race was not exercised", after.Load())
			}
		})
	}
}
