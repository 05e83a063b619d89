package security_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"credo/auth"
	"credo/internal/testenv"
)

// TestConcurrentGrantsSerialize (decisions §7, STYLE 22): two moves of a caller's grants,
// each allowed only by the place the other one leaves, are never both taken. The caller holds
// Read on directory/people through R1 (group g1) and on security/users through R2 (group
// g2); moving R1 to users is allowed while R2 is there, and moving R2 to people while R1 is
// there, but after either move the other is a grant on an object where the caller holds
// nothing more: a 403 in any serial order. Sent at once, real goroutines against a real
// database, the checks must not both read the state the other write replaces (on PostgreSQL,
// READ COMMITTED let both pass about one time in ten before the checks were serialized).
func TestConcurrentGrantsSerialize(t *testing.T) {
	const rounds = 30
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			caller, token := e.user(t, "", false)
			_, opToken := e.user(t, "", true)
			org := caller.OrganizationIdentifier
			g1 := e.group(t, org, "Movers one "+caller.UserIdentifier[:8])
			g2 := e.group(t, org, "Movers two "+caller.UserIdentifier[:8])
			e.member(t, caller.UserIdentifier, g1, org)
			e.member(t, caller.UserIdentifier, g2, org)
			e.grant(t, g1, []string{"security/permissions"}, auth.Read, auth.Write)
			r1 := e.create(t, "Permission", map[string]any{"GroupIdentifier": g1, "ObjectIdentifier": auth.ObjectID("directory/people").String(), "AllowRead": true})
			r2 := e.create(t, "Permission", map[string]any{"GroupIdentifier": g2, "ObjectIdentifier": auth.ObjectID("security/users").String(), "AllowRead": true})
			item1 := "security/permissions/" + r1["PermissionIdentifier"].(string)
			item2 := "security/permissions/" + r2["PermissionIdentifier"].(string)
			move := func(object string) string { return fmt.Sprintf(`{"ObjectIdentifier":%q}`, auth.ObjectID(object)) }

			outcomes := map[string]int{}
			for i := 0; i < rounds; i++ {
				var wg sync.WaitGroup
				var s1, s2 int
				wg.Add(2)
				go func() { defer wg.Done(); s1 = e.do(t, "PATCH", item1, move("security/users"), bearer(token)...).status }()
				go func() {
					defer wg.Done()
					s2 = e.do(t, "PATCH", item2, move("directory/people"), bearer(token)...).status
				}()
				wg.Wait()
				outcomes[fmt.Sprintf("%d/%d", s1, s2)]++
				e.do(t, "PATCH", item1, move("directory/people"), bearer(opToken)...).expect(t, "restore R1", http.StatusOK)
				e.do(t, "PATCH", item2, move("security/users"), bearer(opToken)...).expect(t, "restore R2", http.StatusOK)
			}
			if outcomes["200/200"] > 0 || outcomes["200/403"]+outcomes["403/200"] != rounds {
				t.Errorf("outcomes of %d rounds (move R1 / move R2): %v; want exactly one move per round", rounds, outcomes)
			}
		})
	}
}
