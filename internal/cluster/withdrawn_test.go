package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/internal/cluster"
	"credo/internal/testenv"
)

// TestTwoReplicasForgetWithdrawnRights: rights taken away — a permission deleted through one
// replica, a membership ended, a person removed, archived or demoted from operator and a secret revoked
// with the CLI, all in the shared database — are refused by both replicas within the
// documented bounds (docs/security.md, "Freshness" and "Revocation"), even by a replica that
// has just honoured them and holds them in its caches.
func TestTwoReplicasForgetWithdrawnRights(t *testing.T) {
	url := testenv.Postgres(t)
	bin := cluster.Binary(t)
	reg := registry(t)
	p := testenv.Partition(t)
	env := []string{"CREDO_DATABASE=" + url, "CREDO_PARTITIONS=" + p, "CREDO_DESCRIPTORS=" + extraDescriptors(t)}
	procs := cluster.StartAll(t, 2, bin, env)
	proxy := cluster.NewProxy(t, "", procs[0].URL(), procs[1].URL())
	st := openStore(t, url, p, reg)
	op := secret(t, bin, env, "--partition", p, "--operator", "--email", "operator@example.com")
	opToken := token(t, proxy.URL, p, op.Secret)
	v2 := proxy.URL + "/v2/" + p + "/"
	org := op.OrganizationIdentifier

	// reader makes a user of the operator's organization whose group may read people, and
	// returns the user, its secret and token, and the membership and permission that grant it.
	reader := func(t *testing.T, email string) (user, sec, tok, membership, permission string) {
		t.Helper()
		u := secret(t, bin, env, "--partition", p, "--organization", org, "--email", email)
		group := load(t, st, "Group", map[string]any{"OrganizationIdentifier": org, "GroupName": "Readers " + email})["GroupIdentifier"]
		m := load(t, st, "Membership", map[string]any{"UserIdentifier": u.UserIdentifier, "GroupIdentifier": group,
			"OrganizationIdentifier": org, "MembershipEffective": "2020-01-01T00:00:00Z"})
		var perm struct{ PermissionIdentifier string }
		call(t, "POST", v2+"security/permissions", opToken, fmt.Sprintf(`{"GroupIdentifier":%q,"ObjectIdentifier":%q,"ObjectType":"Resource","AllowRead":true}`,
			group, auth.ObjectID("directory/people")), cluster.BackendHeader, "0").want(t, "grant", http.StatusCreated, &perm)
		tok = token(t, proxy.URL, p, u.Secret)
		return u.UserIdentifier, u.Secret, tok, m["MembershipIdentifier"].(string), perm.PermissionIdentifier
	}
	probe := func(tok, path, backend string) int {
		return call(t, "GET", v2+path, tok, "", cluster.BackendHeader, backend).status
	}
	// warm has both replicas honour tok on path now, so that each holds it in its caches.
	warm := func(t *testing.T, tok, path string) {
		t.Helper()
		waitFor(t, "both replicas honour "+path, auth.DecisionBound, time.Now(), func() bool {
			return probe(tok, path, "0") == http.StatusOK && probe(tok, path, "1") == http.StatusOK
		})
	}
	// refusedByBoth waits until both replicas answer want, within bound of since.
	refusedByBoth := func(t *testing.T, tok, path string, want int, bound time.Duration, since time.Time) {
		t.Helper()
		for _, b := range []string{"0", "1"} {
			waitFor(t, "replica "+b+" answers "+fmt.Sprint(want), bound, since, func() bool { return probe(tok, path, b) == want })
		}
	}
	// change deletes (set "") or updates the rows of a group whose member has value, in the
	// database, as an administrator would.
	change := func(t *testing.T, name, set, member, value string) {
		t.Helper()
		r := reg.MustByName(name)
		f, _ := r.Member(member)
		db := st.DB(context.Background()).Table(st.TableName(r)).Where(`"`+f.Column+`" = ?`, value)
		var err error
		if set == "" {
			err = db.Delete(nil).Error
		} else {
			err = db.Exec(fmt.Sprintf(`UPDATE %s SET %s WHERE "%s" = ?`, st.TableName(r), set, f.Column), value).Error
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("permission deleted on one replica, refused by both", func(t *testing.T) {
		t.Parallel()
		_, _, tok, _, perm := reader(t, "perm@example.com")
		warm(t, tok, "directory/people/count")
		since := time.Now()
		call(t, "DELETE", v2+"security/permissions/"+perm, opToken, "", cluster.BackendHeader, "0").want(t, "withdraw on replica 0", http.StatusOK)
		refusedByBoth(t, tok, "directory/people/count", http.StatusForbidden, auth.DecisionBound, since)
	})

	t.Run("membership ended, refused by both", func(t *testing.T) {
		t.Parallel()
		_, _, tok, m, _ := reader(t, "member@example.com")
		warm(t, tok, "directory/people/count")
		since := time.Now()
		r := reg.MustByName("Membership")
		if err := st.Delete(context.Background(), r, []any{m}, engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		refusedByBoth(t, tok, "directory/people/count", http.StatusForbidden, auth.DecisionBound, since)
	})

	t.Run("person removed, refused by both", func(t *testing.T) {
		t.Parallel()
		user, _, tok, _, _ := reader(t, "removed@example.com")
		warm(t, tok, "directory/people/count")
		since := time.Now()
		change(t, "Person", "", "UserIdentifier", user)
		refusedByBoth(t, tok, "security/tokens/introspect", http.StatusUnauthorized, auth.RevocationBound, since)
	})

	t.Run("person archived, refused by both", func(t *testing.T) {
		t.Parallel()
		user, _, tok, _, _ := reader(t, "archived@example.com")
		warm(t, tok, "directory/people/count")
		since := time.Now()
		f, _ := reg.MustByName("Person").Member("IsArchived")
		change(t, "Person", `"`+f.Column+`" = true`, "UserIdentifier", user)
		refusedByBoth(t, tok, "security/tokens/introspect", http.StatusUnauthorized, auth.RevocationBound, since)
	})

	t.Run("operator demoted, refused by both", func(t *testing.T) {
		t.Parallel()
		demoted := secret(t, bin, env, "--partition", p, "--operator", "--email", "demoted@example.com")
		tok := token(t, proxy.URL, p, demoted.Secret)
		warm(t, tok, "directory/people/count")
		since := time.Now()
		r := reg.MustByName("Person")
		f, _ := r.Member("IsOperator")
		change(t, "Person", `"`+f.Column+`" = false`, "UserIdentifier", demoted.UserIdentifier)
		refusedByBoth(t, tok, "directory/people/count", http.StatusForbidden, auth.RevocationBound, since)
	})

	t.Run("secret revoked with the CLI, its tokens refused by both", func(t *testing.T) {
		t.Parallel()
		_, sec, tok, _, _ := reader(t, "revoked@example.com")
		warm(t, tok, "directory/people/count")
		cmd := exec.Command(bin, "secret", "revoke", "--partition", p, "-")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(sec)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("credo secret revoke: %v\n%s", err, out.String())
		}
		since := time.Now() // the revocation is stored once the command has ended
		refusedByBoth(t, tok, "security/tokens/introspect", http.StatusUnauthorized, auth.RevocationBound, since)
	})
}
