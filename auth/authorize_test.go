package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name string
		bit  int64
		ok   bool
	}{
		{name: "Execute", bit: 1, ok: true},
		{name: "Read", bit: 2, ok: true},
		{name: "Write", bit: 4, ok: true},
		{name: "Create", bit: 8, ok: true},
		{name: "Delete", bit: 16, ok: true},
		{name: "Administrate", bit: 32, ok: true},
		{name: "Configure", bit: 64, ok: true},
		{name: "TrialAccess", bit: 0, ok: true},
		{name: "read"},
		{name: ""},
		{name: "Everything"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFlag(tt.name)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseFlag(%q) error %v; want ok %v", tt.name, err, tt.ok)
			}
			if err == nil && (f.Bit() != tt.bit || string(f) != tt.name) {
				t.Fatalf("ParseFlag(%q) = %q with bit %d; want bit %d", tt.name, f, f.Bit(), tt.bit)
			}
		})
	}
	if got := len(Flags()); got != 8 {
		t.Fatalf("Flags lists %d flags", got)
	}
	if got := MaskOf(Flags()...); got != 127 {
		t.Fatalf("MaskOf(all) = %d; want 127", got)
	}
	if got := MaskOf(Read, Write, TrialAccess); got != 6 {
		t.Fatalf("MaskOf(Read, Write, TrialAccess) = %d; want 6", got)
	}
}

func TestObjectID(t *testing.T) {
	tests := []struct {
		path, want string
	}{
		// Pinned: stored permissions refer to these identifiers.
		{path: "people", want: "838b9db0-d6b1-5bda-bfc1-1e8a94bb52a3"},
		{path: "/people/", want: "838b9db0-d6b1-5bda-bfc1-1e8a94bb52a3"},
		{path: "progress/gradebooks", want: "4c21956b-36e5-5689-8e32-26703f408449"},
	}
	for _, tt := range tests {
		got := ObjectID(tt.path)
		if got.String() != tt.want || got.Version() != 5 {
			t.Errorf("ObjectID(%q) = %s (version %d); want %s", tt.path, got, got.Version(), tt.want)
		}
	}
}

// grantStore is an in-memory Grants that counts its queries. masks apply in every
// organization; byOrg, when set, replaces them per organization.
type grantStore struct {
	masks map[uuid.UUID]int64
	byOrg map[string]map[uuid.UUID]int64
	calls int
	fail  bool
}

func (g *grantStore) Mask(_ context.Context, partition, user, org string, object uuid.UUID) (int64, error) {
	g.calls++
	if g.fail {
		return 0, errors.New("database is down")
	}
	if g.byOrg != nil {
		return g.byOrg[org][object], nil
	}
	return g.masks[object], nil
}

// TestMaskPerOrganization: a user's decisions are cached per organization, so a credential
// for organization A is never answered with the mask of the same user acting in B.
func TestMaskPerOrganization(t *testing.T) {
	people := ObjectID("directory/people")
	g := &grantStore{byOrg: map[string]map[uuid.UUID]int64{"B": {people: MaskOf(Administrate)}}}
	a := &Authorizer{Grants: g, Clock: newClock().Now}
	inB := &Principal{UserIdentifier: "u1", Partition: "e01", OrganizationIdentifier: "B"}
	inA := &Principal{UserIdentifier: "u1", Partition: "e01", OrganizationIdentifier: "A"}
	if err := a.Allow(context.Background(), inB, people, Delete); err != nil {
		t.Fatalf("in B: %v", err)
	}
	if err := a.Allow(context.Background(), inA, people, Read); !errors.Is(err, ErrForbidden) {
		t.Errorf("in A after a decision in B: %v, want ErrForbidden", err)
	}
	if g.calls != 2 {
		t.Errorf("%d mask queries, want one per organization", g.calls)
	}
	if err := (&Authorizer{}).Allow(context.Background(), inA, people, Read); err == nil {
		t.Error("an Authorizer without Grants allowed a request")
	}
}

func TestAllow(t *testing.T) {
	people := ObjectID("people")
	user := &Principal{UserIdentifier: "u1", Partition: "e01"}
	tests := []struct {
		name    string
		p       *Principal
		mask    int64
		need    Flag
		fail    bool
		want    error
		failure bool
		msg     []string
		calls   int
	}{
		{name: "anonymous", p: nil, need: Read, want: ErrUnauthenticated, msg: []string{"no credential"}},
		{name: "operator without grants", p: &Principal{UserIdentifier: "op", Partition: "e01", Operator: true}, need: Delete, calls: 0},
		{name: "operator while grants fail", p: &Principal{Operator: true}, need: Configure, fail: true},
		{name: "read granted", p: user, mask: MaskOf(Read), need: Read, calls: 1},
		{name: "write not granted by read", p: user, mask: MaskOf(Read), need: Write, calls: 1,
			want: ErrForbidden, msg: []string{"Write", people.String()}},
		{name: "no permission", p: user, mask: 0, need: Read, calls: 1, want: ErrForbidden, msg: []string{"Read"}},
		{name: "execute", p: user, mask: MaskOf(Execute), need: Execute, calls: 1},
		{name: "administrate grants delete", p: user, mask: MaskOf(Administrate), need: Delete, calls: 1},
		{name: "administrate grants configure", p: user, mask: MaskOf(Administrate), need: Configure, calls: 1},
		{name: "administrate grants trial access", p: user, mask: MaskOf(Administrate), need: TrialAccess, calls: 1},
		{name: "no mask grants trial access", p: user, mask: 127 &^ MaskOf(Administrate), need: TrialAccess, calls: 1,
			want: ErrForbidden, msg: []string{"TrialAccess"}},
		{name: "configure is not administrate", p: user, mask: MaskOf(Configure), need: Read, calls: 1, want: ErrForbidden},
		{name: "grants failure is not a 403", p: user, need: Read, fail: true, calls: 1, failure: true, msg: []string{"database is down"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &grantStore{masks: map[uuid.UUID]int64{people: tt.mask}, fail: tt.fail}
			a := &Authorizer{Grants: g, Clock: newClock().Now}
			err := a.Allow(context.Background(), tt.p, people, tt.need)
			if tt.failure {
				if err == nil || errors.Is(err, ErrForbidden) || errors.Is(err, ErrUnauthenticated) {
					t.Fatalf("got %v; want a plain failure", err)
				}
			} else {
				checkErr(t, err, tt.want, tt.msg...)
			}
			if g.calls != tt.calls {
				t.Fatalf("%d grant queries; want %d", g.calls, tt.calls)
			}
		})
	}
}

func TestAllowPath(t *testing.T) {
	g := &grantStore{masks: map[uuid.UUID]int64{ObjectID("progress/gradebooks"): MaskOf(Read)}}
	a := PathAuthorizer{&Authorizer{Grants: g}}
	// PathAuthorizer has the shape the router asks of an authorizer.
	var _ interface {
		Allow(ctx context.Context, p *Principal, object, need string) error
	} = a
	user := &Principal{UserIdentifier: "u1", Partition: "e01"}
	tests := []struct {
		name, path, need string
		want             error
		msg              []string
		failure          bool
	}{
		{name: "granted", path: "progress/gradebooks", need: "Read"},
		{name: "refused names the path", path: "progress/gradebooks", need: "Delete", want: ErrForbidden,
			msg: []string{`the Delete permission on "progress/gradebooks"`}},
		{name: "unknown object", path: "people", need: "Read", want: ErrForbidden, msg: []string{`"people"`}},
		{name: "unknown flag", path: "people", need: "Fly", failure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := a.Allow(context.Background(), user, tt.path, tt.need)
			if tt.failure {
				if err == nil || errors.Is(err, ErrForbidden) {
					t.Fatalf("got %v; want a plain failure", err)
				}
				return
			}
			checkErr(t, err, tt.want, tt.msg...)
		})
	}
}

func TestAuthorizerCache(t *testing.T) {
	people, events := ObjectID("people"), ObjectID("events")
	type step struct {
		advance   time.Duration
		grant     int64 // new mask on people before asking, -1 to keep
		p         *Principal
		object    uuid.UUID
		allowed   bool
		wantCalls int
	}
	u1 := &Principal{UserIdentifier: "u1", Partition: "e01"}
	u2 := &Principal{UserIdentifier: "u2", Partition: "e01"}
	u1e02 := &Principal{UserIdentifier: "u1", Partition: "e02"}
	tests := []struct {
		name  string
		ttl   time.Duration
		steps []step
	}{
		{name: "a revoked permission stops within the TTL", ttl: 3 * time.Second, steps: []step{
			{grant: MaskOf(Read), p: u1, object: people, allowed: true, wantCalls: 1},
			{advance: time.Second, grant: 0, p: u1, object: people, allowed: true, wantCalls: 1},
			{advance: 2 * time.Second, grant: -1, p: u1, object: people, allowed: false, wantCalls: 2},
		}},
		{name: "a new permission applies within the TTL", ttl: time.Second, steps: []step{
			{grant: 0, p: u1, object: people, allowed: false, wantCalls: 1},
			{advance: 500 * time.Millisecond, grant: MaskOf(Read), p: u1, object: people, allowed: false, wantCalls: 1},
			{advance: 500 * time.Millisecond, grant: -1, p: u1, object: people, allowed: true, wantCalls: 2},
		}},
		{name: "TTL is clamped to MaxDecisionTTL", ttl: time.Hour, steps: []step{
			{grant: MaskOf(Read), p: u1, object: people, allowed: true, wantCalls: 1},
			{advance: MaxDecisionTTL, grant: 0, p: u1, object: people, allowed: false, wantCalls: 2},
		}},
		{name: "zero TTL means MaxDecisionTTL", ttl: 0, steps: []step{
			{grant: MaskOf(Read), p: u1, object: people, allowed: true, wantCalls: 1},
			{advance: MaxDecisionTTL - time.Millisecond, grant: 0, p: u1, object: people, allowed: true, wantCalls: 1},
			{advance: time.Millisecond, grant: -1, p: u1, object: people, allowed: false, wantCalls: 2},
		}},
		{name: "entries are per partition, user and object", ttl: time.Second, steps: []step{
			{grant: MaskOf(Read), p: u1, object: people, allowed: true, wantCalls: 1},
			{grant: -1, p: u2, object: people, allowed: true, wantCalls: 2},
			{grant: -1, p: u1e02, object: people, allowed: true, wantCalls: 3},
			{grant: -1, p: u1, object: events, allowed: false, wantCalls: 4},
			{grant: -1, p: u1, object: people, allowed: true, wantCalls: 4},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			g := &grantStore{masks: map[uuid.UUID]int64{}}
			a := &Authorizer{Grants: g, TTL: tt.ttl, Clock: clk.Now}
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				if s.grant >= 0 {
					g.masks[people] = s.grant
				}
				err := a.Allow(context.Background(), s.p, s.object, Read)
				if (err == nil) != s.allowed || g.calls != s.wantCalls {
					t.Fatalf("step %d: err %v after %d queries; want allowed %v after %d", i, err, g.calls, s.allowed, s.wantCalls)
				}
			}
		})
	}
	t.Run("expired entries are swept", func(t *testing.T) {
		clk := newClock()
		a := &Authorizer{Grants: &grantStore{}, TTL: time.Second, Clock: clk.Now}
		for _, path := range []string{"a", "b", "c"} {
			_ = a.Allow(context.Background(), u1, ObjectID(path), Read)
		}
		clk.Advance(2 * time.Second)
		_ = a.Allow(context.Background(), u1, ObjectID("d"), Read)
		if n := len(a.masks); n != 1 {
			t.Fatalf("%d entries after the sweep; want 1", n)
		}
	})
}
