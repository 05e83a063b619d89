package cluster_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/handlers/idempotency"
	"credo/internal/cluster"
	"credo/internal/groupsuite"
	"credo/internal/openapitest"
	"credo/internal/testenv"
)

// poll is the interval between the probes that watch for a change to reach another replica.
const poll = 25 * time.Millisecond

// TestTwoReplicas starts two credo processes on one PostgreSQL database (at once, so that
// their migrations race) behind a round-robin proxy, and checks that a client cannot tell
// them apart: the generated suite of every group through the proxy, an export made on one
// and downloaded from the other, a revocation and a grant made on one holding on the other
// within the documented bounds, an Idempotency-Key honoured by both, and concurrent version-1
// registrations split over both.
func TestTwoReplicas(t *testing.T) {
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

	t.Run("generated suite", func(t *testing.T) {
		// Every exchange is also checked against the OpenAPI document the replicas serve.
		var doc any
		call(t, "GET", v2+"openapi.json", "", "").want(t, "openapi.json", http.StatusOK, &doc)
		api := openapitest.New(t, doc).Added(cluster.BackendHeader) // the proxy's, not the server's
		srv := &groupsuite.Server{URL: proxy.URL, Partition: p, Store: st,
			Client: &http.Client{Transport: api.RoundTripper(http.DefaultTransport)},
			Header: http.Header{"Authorization": {"Bearer " + opToken}}}
		before := [2]int64{proxy.Served(0), proxy.Served(1)}
		for _, r := range reg.Public() {
			t.Run(r.Path, func(t *testing.T) { groupsuite.Exercise(t, srv, r) })
		}
		for i := range 2 {
			if proxy.Served(i) == before[i] {
				t.Errorf("replica %d served none of the suite", i)
			}
		}
	})

	t.Run("export on one replica, download from the other", func(t *testing.T) {
		load(t, st, "Gradebook", map[string]any{"OrganizationIdentifier": op.OrganizationIdentifier, "GradebookTitle": "Replicated", "GradebookType": "Scores"})
		for _, format := range []string{"csv", "json"} {
			var x struct{ DownloadUrl string }
			exp := call(t, "GET", v2+"progress/gradebooks/export?Format="+format+"&GradebookTitle=Replicated", opToken, "", cluster.BackendHeader, "0").
				want(t, "export on replica 0", http.StatusOK, &x)
			got := call(t, "GET", proxy.URL+x.DownloadUrl, opToken, "", cluster.BackendHeader, "1").want(t, "download from replica 1", http.StatusOK)
			if exp.backend != "0" || got.backend != "1" {
				t.Fatalf("served by %s and %s, want 0 and 1", exp.backend, got.backend)
			}
			if !strings.Contains(string(got.body), "Replicated") {
				t.Errorf("%s download: %q", format, got.body)
			}
			if cd := got.header.Get("Content-Disposition"); cd != "attachment; filename=gradebook."+format {
				t.Errorf("Content-Disposition %q", cd)
			}
		}
	})

	t.Run("revoked on one replica, refused by the other", func(t *testing.T) {
		t.Parallel()
		tok := token(t, proxy.URL, p, op.Secret)
		jti := claim(t, tok, "jti")
		probe := func(backend string) int {
			return call(t, "GET", v2+"security/tokens/introspect", tok, "", cluster.BackendHeader, backend).status
		}
		// Replica 1 has just accepted the token, so it holds "not revoked" in its cache.
		if s := probe("1"); s != http.StatusOK {
			t.Fatalf("introspect on replica 1: %d", s)
		}
		revoked := time.Now() // before the request: the bound is measured from no later than the change
		call(t, "DELETE", v2+"security/tokens/"+jti, opToken, "", cluster.BackendHeader, "0").want(t, "revoke on replica 0", http.StatusOK)
		if s := probe("0"); s != http.StatusUnauthorized {
			t.Errorf("replica 0, which revoked it, answers %d, want 401 at once", s)
		}
		waitFor(t, "replica 1 refuses the revoked token", auth.RevocationBound, revoked, func() bool { return probe("1") == http.StatusUnauthorized })
	})

	t.Run("granted on one replica, honoured by the other", func(t *testing.T) {
		t.Parallel()
		user := secret(t, bin, env, "--partition", p, "--organization", op.OrganizationIdentifier, "--email", "member@example.com")
		userToken := token(t, proxy.URL, p, user.Secret)
		group := load(t, st, "Group", map[string]any{"OrganizationIdentifier": op.OrganizationIdentifier, "GroupName": "Replicated readers"})["GroupIdentifier"]
		load(t, st, "Membership", map[string]any{"UserIdentifier": user.UserIdentifier, "GroupIdentifier": group,
			"OrganizationIdentifier": op.OrganizationIdentifier, "MembershipEffective": "2020-01-01T00:00:00Z"})
		probe := func(backend string) int {
			return call(t, "GET", v2+"directory/people/count", userToken, "", cluster.BackendHeader, backend).status
		}
		// Replica 1 has just refused the user, so it holds the empty mask in its cache.
		if s := probe("1"); s != http.StatusForbidden {
			t.Fatalf("before the grant, replica 1 answers %d, want 403", s)
		}
		grant := fmt.Sprintf(`{"GroupIdentifier":%q,"ObjectIdentifier":%q,"ObjectType":"Resource","AllowRead":true}`,
			group, auth.ObjectID("directory/people"))
		granted := time.Now()
		call(t, "POST", v2+"security/permissions", opToken, grant, cluster.BackendHeader, "0").want(t, "grant on replica 0", http.StatusCreated)
		waitFor(t, "replica 1 honours the grant", auth.DecisionBound, granted, func() bool { return probe("1") == http.StatusOK })
	})

	t.Run("one Idempotency-Key, two replicas", func(t *testing.T) {
		text := "idempotent " + uuid.NewString()
		body := fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":%q,"CommentCreated":"2024-01-01T00:00:00Z"}`,
			uuid.NewString(), op.OrganizationIdentifier, uuid.NewString(), text)
		first := call(t, "POST", v2+"security/users-comments", opToken, body, cluster.BackendHeader, "0", idempotency.KeyHeader, "k-"+text).
			want(t, "create on replica 0", http.StatusCreated)
		again := call(t, "POST", v2+"security/users-comments", opToken, body, cluster.BackendHeader, "1", idempotency.KeyHeader, "k-"+text).
			want(t, "retry on replica 1", http.StatusCreated)
		if again.backend != "1" || string(again.body) != string(first.body) || again.header.Get(idempotency.ReplayedHeader) != "true" ||
			again.header.Get("Location") != first.header.Get("Location") {
			t.Fatalf("retry on replica %s: %v %s; first %s", again.backend, again.header, again.body, first.body)
		}
		if n := count(t, st, "UserComment", "CommentText", text); n != 1 {
			t.Fatalf("%d records, want 1", n)
		}

		// 20 clients at once, through the round-robin proxy: one record.
		const n = 20
		text = "together " + uuid.NewString()
		body = fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":%q,"CommentCreated":"2024-01-01T00:00:00Z"}`,
			uuid.NewString(), op.OrganizationIdentifier, uuid.NewString(), text)
		statuses := make([]int, n)
		per := map[string]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				a := call(t, "POST", v2+"security/users-comments", opToken, body, idempotency.KeyHeader, "k-"+text)
				statuses[i] = a.status
				mu.Lock()
				per[a.backend]++
				mu.Unlock()
			})
		}
		wg.Wait()
		for i, s := range statuses {
			if s != http.StatusCreated && s != http.StatusConflict {
				t.Errorf("call %d: %d", i, s)
			}
		}
		if per["0"] == 0 || per["1"] == 0 {
			t.Errorf("calls per replica %v: not split over both", per)
		}
		if got := count(t, st, "UserComment", "CommentText", text); got != 1 {
			t.Errorf("%d records after %d concurrent requests with one key on two replicas, want 1", got, n)
		}
	})

	t.Run("register-lax on both replicas at once", func(t *testing.T) {
		const n = 50
		org := op.OrganizationIdentifier
		venue, learner := uuid.NewString(), uuid.NewString()
		load(t, st, "Venue", map[string]any{"VenueIdentifier": venue, "OrganizationIdentifier": org, "VenueName": "Replica Hall"})
		load(t, st, "BillingCode", map[string]any{"OrganizationIdentifier": org, "BillingCode": "BC-R"})
		load(t, st, "AssessmentForm", map[string]any{"FormIdentifier": uuid.NewString(), "OrganizationIdentifier": org, "FormCode": "MATH",
			"FormName": "Mathematics", "FormTitle": "Mathematics", "FormPublished": true, "FormTimeLimit": 90})
		load(t, st, "User", map[string]any{"UserIdentifier": learner, "Email": "ada@example.org", "FullName": "Ada Lovelace"})
		load(t, st, "Person", map[string]any{"UserIdentifier": learner, "OrganizationIdentifier": org, "FullName": "Ada Lovelace", "PersonCode": "AL-1"})
		// One instant, written in two offsets, a year ahead.
		at := time.Now().UTC().AddDate(1, 0, 0).Truncate(time.Minute)
		starts := []string{at.Format("2006-01-02T15:04:05Z07:00"), at.In(time.FixedZone("", -6*3600)).Format("2006-01-02T15:04:05-07:00")}
		type placed struct {
			Event        string
			EventCreated bool
		}
		results := make([]placed, n)
		backends := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				body := fmt.Sprintf(`{"EventVenue":%q,"EventStart":%q,"EventExamType":"Sitting","EventExamFormat":"Paper","EventBillingCode":"BC-R","Learner":%q,"Assessment":"MATH"}`,
					venue, starts[i%2], learner)
				a := call(t, "POST", proxy.URL+"/api/registrations/"+uuid.NewString()+"/commands/register-lax", opToken, body)
				if a.status != http.StatusOK || json.Unmarshal(a.body, &results[i]) != nil {
					t.Errorf("call %d: %d %s", i, a.status, a.body)
				}
				backends[i] = a.backend
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		created, per := 0, map[string]int{}
		for i, r := range results {
			if r.EventCreated {
				created++
			}
			if r.Event != results[0].Event {
				t.Fatalf("call %d went to event %s, call 0 to %s", i, r.Event, results[0].Event)
			}
			per[backends[i]]++
		}
		if per["0"] == 0 || per["1"] == 0 {
			t.Errorf("calls per replica %v: not split over both", per)
		}
		if created != 1 {
			t.Errorf("%d calls created an event, want 1", created)
		}
		if got := count(t, st, "Event", "EventVenue", venue); got != 1 {
			t.Errorf("%d events at the venue, want 1", got)
		}
		if got := count(t, st, "Registration", "EventIdentifier", results[0].Event); got != n {
			t.Errorf("%d registrations on the event, want %d", got, n)
		}
	})
}

// waitFor polls ok until it holds, failing the test when the probe that first holds was sent
// more than bound after since (the documented bound is on when a request is sent, so the
// probe's own round trip does not count against it); it logs when that probe was sent.
func waitFor(t *testing.T, what string, bound time.Duration, since time.Time, ok func() bool) {
	t.Helper()
	for {
		sent := time.Since(since)
		if ok() {
			if sent > bound {
				t.Fatalf("%s: first seen in a request sent %v after the change, bound %v", what, sent.Round(time.Millisecond), bound)
			}
			t.Logf("%s in a request sent %v after the change (bound %v)", what, sent.Round(time.Millisecond), bound)
			return
		}
		if time.Since(since) > 2*bound {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(poll)
	}
}

// claim reads a claim of a JWT's payload (not verified: the test made the token).
func claim(t *testing.T, token, name string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	v, _ := claims[name].(string)
	if v == "" {
		t.Fatalf("token has no %s claim: %s", name, payload)
	}
	return v
}
