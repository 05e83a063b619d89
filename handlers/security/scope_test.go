package security_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/auth"
	"credo/internal/testenv"
)

// TestOrganizationScope checks that a non-operator of organization A, allowed to read every
// group, never sees organization B's people, their addresses, users, memberships, gradebooks
// or achievements through get, exists, count, list, search or the gradebook export, while it
// sees A's and an operator sees both. An address no person refers to is an operator's only.
func TestOrganizationScope(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			viewer, token := e.user(t, "", false)
			_, opToken := e.user(t, "", true)
			orgA, orgB := viewer.OrganizationIdentifier, newOrg(t, e)
			readers := e.group(t, orgA, "Readers")
			e.member(t, viewer.UserIdentifier, readers, orgA)
			e.grant(t, readers, objects(e.srv.Endpoints()), auth.Read)

			// One record of each scoped group in each organization.
			ids := map[string][2]string{} // group path → ids in A and B
			for i, org := range []string{orgA, orgB} {
				u := e.create(t, "User", map[string]any{"Email": uuid.NewString()[:8] + "@example.com", "FullName": "Scoped " + org[:8]})
				addr := e.create(t, "PersonAddress", map[string]any{"City": "Scoped " + org[:8]})
				p := e.create(t, "Person", map[string]any{"UserIdentifier": u["UserIdentifier"], "OrganizationIdentifier": org, "FullName": "Scoped",
					"WorkAddressIdentifier": addr["AddressIdentifier"]})
				g := e.group(t, org, "Scoped")
				m := e.create(t, "Membership", map[string]any{"UserIdentifier": u["UserIdentifier"], "GroupIdentifier": g, "OrganizationIdentifier": org})
				gb := e.create(t, "Gradebook", map[string]any{"OrganizationIdentifier": org, "GradebookTitle": "Scoped " + org[:8]})
				a := e.create(t, "Achievement", map[string]any{"OrganizationIdentifier": org})
				for path, rec := range map[string]map[string]any{
					"security/users":             u,
					"directory/people":           p,
					"directory/people-addresses": addr,
					"directory/memberships":      m,
					"progress/gradebooks":        gb,
					"progress/achievements":      a,
				} {
					r := e.reg.MustByName(path)
					pair := ids[path]
					pair[i] = rec[r.Key[0].Name].(string)
					ids[path] = pair
				}
			}

			for path, pair := range ids {
				a, b := pair[0], pair[1]
				e.do(t, "GET", path+"/"+a, "", bearer(token)...).expect(t, path+" get A", http.StatusOK)
				e.do(t, "GET", path+"/"+b, "", bearer(token)...).expect(t, path+" get B", http.StatusNotFound)
				e.do(t, "GET", path+"/"+b, "", bearer(opToken)...).expect(t, path+" operator get B", http.StatusOK)
				e.do(t, "HEAD", path+"/"+a, "", bearer(token)...).expect(t, path+" exists A", http.StatusOK)
				e.do(t, "HEAD", path+"/"+b, "", bearer(token)...).expect(t, path+" exists B", http.StatusNotFound)
				for _, c := range []struct {
					id   string
					want string
				}{{a, `{"Count":1}`}, {b, `{"Count":0}`}} {
					res := e.do(t, "GET", path+"/count?Identifier="+c.id, "", bearer(token)...).expect(t, path+" count", http.StatusOK)
					if strings.TrimSpace(string(res.body)) != c.want {
						t.Errorf("%s count?Identifier=%s: %s, want %s", path, c.id, res.body, c.want)
					}
				}
				for _, op := range []string{"", "/search"} {
					res := e.do(t, "GET", path+op+"?Identifier="+a, "", bearer(token)...).expect(t, path+op+" A", http.StatusOK)
					if !strings.Contains(string(res.body), a) {
						t.Errorf("%s%s?Identifier=A does not return A: %s", path, op, res.body)
					}
					res = e.do(t, "GET", path+op+"?Identifier="+b, "", bearer(token)...).expect(t, path+op+" B", http.StatusOK)
					if strings.TrimSpace(string(res.body)) != "[]" {
						t.Errorf("%s%s?Identifier=B: %s, want []", path, op, res.body)
					}
					res = e.do(t, "GET", path+op+"?Take=1000", "", bearer(token)...).expect(t, path+op, http.StatusOK)
					if strings.Contains(string(res.body), b) {
						t.Errorf("%s%s shows organization B's record %s", path, op, b)
					}
				}
			}

			// An address that no person refers to is no organization's.
			orphan := e.create(t, "PersonAddress", map[string]any{"City": "Nobody's"})["AddressIdentifier"].(string)
			e.do(t, "GET", "directory/people-addresses/"+orphan, "", bearer(token)...).expect(t, "orphan address", http.StatusNotFound)
			e.do(t, "HEAD", "directory/people-addresses/"+orphan, "", bearer(token)...).expect(t, "orphan address exists", http.StatusNotFound)
			e.do(t, "GET", "directory/people-addresses/"+orphan, "", bearer(opToken)...).expect(t, "operator orphan address", http.StatusOK)
			count := e.do(t, "GET", "directory/people-addresses/count", "", bearer(token)...).expect(t, "address count", http.StatusOK)
			if strings.TrimSpace(string(count.body)) != `{"Count":1}` {
				t.Errorf("A's addresses: %s, want the one A's person refers to", count.body)
			}

			// The gradebook export, and its download, hold only A's gradebooks.
			gbs := ids["progress/gradebooks"]
			var export struct{ DownloadUrl string }
			e.do(t, "GET", "progress/gradebooks/export", "", bearer(token)...).expect(t, "export", http.StatusOK).json(t, &export)
			req, _ := http.NewRequest("GET", e.ts.URL+export.DownloadUrl, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := e.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body := readAll(t, res)
			if res.StatusCode != http.StatusOK || !strings.Contains(body, gbs[0]) || strings.Contains(body, gbs[1]) {
				t.Errorf("export download %d: want A's gradebook %s and not B's %s: %s", res.StatusCode, gbs[0], gbs[1], body)
			}
		})
	}
}
