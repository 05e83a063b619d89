package security_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/engine"
	"credo/internal/testenv"
)

// spoofed are audit members a client sends to pass a grant off as another's, from another
// time and organization: the server ignores them.
func spoofed(body string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		panic(err)
	}
	m["PermissionGrantedBy"] = uuid.NewString()
	m["PermissionGranted"] = "2001-02-03T04:05:06Z"
	m["OrganizationIdentifier"] = uuid.NewString()
	b, _ := json.Marshal(m)
	return string(b)
}

// TestGrantRecordsItsGrantor (decisions §6, §7): every create, PUT and PATCH of a permission,
// by a non-operator or an operator, stores and answers PermissionGrantedBy = the caller's user,
// PermissionGranted = the time of the write and OrganizationIdentifier = the organization of
// the permission's group (the nil UUID for a group the partition does not hold), whatever the
// body says: spoofed values are ignored, not refused. A PATCH that changes only ObjectType
// records its writer and time too. The ETag a PUT or PATCH answers is the stored record's.
func TestGrantRecordsItsGrantor(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b)
			raw := e.unvalidated(t)
			granter, token := e.user(t, "", false)
			operator, opToken := e.user(t, "", true)
			orgA := granter.OrganizationIdentifier
			ga := e.group(t, orgA, "Granters "+granter.UserIdentifier[:8])
			e.member(t, granter.UserIdentifier, ga, orgA)
			e.grant(t, ga, []string{"security/permissions"}, auth.Create, auth.Write, auth.Read)
			e.grant(t, ga, []string{"directory/people", "progress/gradebooks"}, auth.Read)
			gr := e.group(t, orgA, "Grantees "+granter.UserIdentifier[:8])
			orgB := newOrg(t, e)
			gb := e.group(t, orgB, "Other organization's group")
			nilOrg := uuid.Nil.String()
			h, op := bearer(token), bearer(opToken)

			// check reads the permission back (through the validated server) and compares
			// what the write answered (a create's body) and what is stored with the caller,
			// the clock's time and the organization.
			check := func(what, item string, answered []byte, by, org string) {
				t.Helper()
				res := e.do(t, "GET", item, "", op...).expect(t, what+": get", http.StatusOK)
				for _, body := range [][]byte{answered, res.body} {
					if body == nil {
						continue
					}
					var rec struct {
						PermissionGrantedBy, PermissionGranted, OrganizationIdentifier string
					}
					if err := json.Unmarshal(body, &rec); err != nil {
						t.Fatal(err)
					}
					at, err := engine.ParseDateTime(rec.PermissionGranted)
					want := e.clock.Now().Truncate(100 * time.Nanosecond)
					if rec.PermissionGrantedBy != by || err != nil || !at.Equal(want) || rec.OrganizationIdentifier != org {
						t.Errorf("%s: grantor %s at %s in %s, want %s at %s in %s", what,
							rec.PermissionGrantedBy, rec.PermissionGranted, rec.OrganizationIdentifier, by, want.Format(time.RFC3339Nano), org)
					}
				}
			}
			// write sends a PUT or PATCH and checks its ETag against a get's.
			write := func(what, method, item, body string, cred []string) {
				t.Helper()
				res := e.doAt(t, raw, e.partition, method, item, body, cred...).expect(t, what, http.StatusOK)
				if got := e.do(t, "GET", item, "", op...).header.Get("ETag"); got != res.header.Get("ETag") {
					t.Errorf("%s: answered ETag %s, the stored record's is %s", what, res.header.Get("ETag"), got)
				}
			}
			create := func(what, body string, cred []string) (string, []byte) {
				t.Helper()
				res := e.doAt(t, raw, e.partition, "POST", "security/permissions", body, cred...).expect(t, what, http.StatusCreated)
				var rec struct{ PermissionIdentifier string }
				res.json(t, &rec)
				return "security/permissions/" + rec.PermissionIdentifier, res.body
			}

			item, body := create("non-operator creates", spoofed(permissionBody(gr, "directory/people", auth.Read)), h)
			check("non-operator create", item, body, granter.UserIdentifier, orgA)

			e.clock.Advance(time.Minute)
			write("operator patches ObjectType only", "PATCH", item, `{"ObjectType":"Resource"}`, op)
			check("operator's patch of ObjectType", item, nil, operator.UserIdentifier, orgA)

			e.clock.Advance(time.Minute)
			write("non-operator puts", "PUT", item, spoofed(permissionBody(gr, "progress/gradebooks", auth.Read)), h)
			check("non-operator put", item, nil, granter.UserIdentifier, orgA)

			e.clock.Advance(time.Minute)
			write("operator patches", "PATCH", item, spoofed(`{"AllowWrite":true}`), op)
			check("operator patch", item, nil, operator.UserIdentifier, orgA)

			e.clock.Advance(time.Minute)
			write("operator puts", "PUT", item, spoofed(permissionBody(gr, "progress/gradebooks", auth.Read)), op)
			check("operator put", item, nil, operator.UserIdentifier, orgA)

			e.clock.Advance(time.Minute)
			write("non-operator patches", "PATCH", item, spoofed(`{"ObjectType":"Resource"}`), h)
			check("non-operator patch", item, nil, granter.UserIdentifier, orgA)

			// An operator's grant to another organization's group is that organization's; a
			// move by PUT or PATCH follows the group.
			e.clock.Advance(time.Minute)
			write("operator moves by put", "PUT", item, spoofed(permissionBody(gb, "progress/gradebooks", auth.Read)), op)
			check("operator's move by put", item, nil, operator.UserIdentifier, orgB)
			e.clock.Advance(time.Minute)
			write("operator moves by patch", "PATCH", item, spoofed(fmt.Sprintf(`{"GroupIdentifier":%q}`, gr)), op)
			check("operator's move by patch", item, nil, operator.UserIdentifier, orgA)

			other, body := create("operator creates for another organization", spoofed(permissionBody(gb, "directory/people", auth.Read)), op)
			check("operator create for another organization", other, body, operator.UserIdentifier, orgB)
			// A group the partition does not hold has no organization: the nil UUID.
			unknown, body := create("operator creates for an unknown group", spoofed(permissionBody(uuid.NewString(), "directory/people", auth.Read)), op)
			check("operator create for an unknown group", unknown, body, operator.UserIdentifier, nilOrg)
			e.clock.Advance(time.Minute)
			write("operator patches into an unknown group", "PATCH", other, fmt.Sprintf(`{"GroupIdentifier":%q}`, uuid.NewString()), op)
			check("operator patch into an unknown group", other, nil, operator.UserIdentifier, nilOrg)

			// A body that follows the document (no audit members) gets the same.
			e.clock.Advance(time.Minute)
			res := e.do(t, "POST", "security/permissions", permissionBody(gr, "directory/people", auth.Read), h...).expect(t, "a create without audit members", http.StatusCreated)
			var rec struct{ PermissionIdentifier string }
			res.json(t, &rec)
			check("a create without audit members", "security/permissions/"+rec.PermissionIdentifier, res.body, granter.UserIdentifier, orgA)
		})
	}
}
