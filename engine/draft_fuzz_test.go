package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// FuzzDraftRoundTrip: a JSON body, decoded into a draft of one of the descriptors' resources
// and created, then a second body applied to it as a JSON merge patch. Decoding never panics
// and its only error is a *engine.ValidationError; a create or patch is accepted or refused
// as ErrInvalid or ErrConflict, never another error (a 500); a refused patch changes nothing;
// an accepted one reads back every member given exactly as sent (decisions §4: what credo
// cannot keep exactly it refuses), and every member it stores, whoever set it (a beforeWrite
// hook derives a group's slug), obeys the member rules (obeysRules). SQLite in a temporary
// folder; the crashers it finds are table tests on both stores (TestDraftRoundTripCases).
func FuzzDraftRoundTrip(f *testing.F) {
	reg := fuzzRegistry(f)
	rs := writable(reg)
	for i, r := range rs {
		f.Add(uint8(i), []byte(withMember(r, 0, "", "")), []byte(withMember(r, 1, "", "")))
	}
	for _, c := range draftCases {
		for i, r := range rs {
			if r.Name == c.resource {
				f.Add(uint8(i), []byte(c.body), []byte(c.patch))
			}
		}
	}
	stores := fuzzStores(f, reg)
	f.Fuzz(func(t *testing.T, which uint8, body, patch []byte) {
		for _, s := range stores {
			roundTrip(t, s, rs[int(which)%len(rs)], body, patch)
		}
	})
}

// FuzzDraftMember is FuzzDraftRoundTrip with the body built around one member: a body giving
// every member a well-formed value, but member's value is text the fuzzer writes, as a JSON
// string (quoted) or as it is (raw), on create or in a patch. Random bytes rarely make a JSON
// object; this reaches the members' decoders and the stores with every value.
func FuzzDraftMember(f *testing.F) {
	reg := fuzzRegistry(f)
	rs := writable(reg)
	for _, v := range []struct {
		v      string
		quoted bool
	}{
		{"x", true}, {"", true}, {`"\u0000"`, false}, {`"\ud800"`, false}, {`a\u2028b`, true}, {"Émilie", true},
		{"2024-03-10T14:30:00.1234567-06:00", true}, {"0190A6F0-0000-7000-8000-00000000000A", true}, {"-0", false},
		{"2147483648", false}, {"1e2", false}, {"true", false}, {"null", false}, {"[]", false}, {"{}", false},
		{"9999-12-31T23:59:59.9999999Z", true}, {"0001-01-01T00:00:00+00:01", true}, {" 7 ", false},
		// An int as JSON writes one only (engine.ParseInteger): no fraction, exponent or string.
		{"1.0", false}, {"-1E0", false}, {"5", true}, {"-2147483649", false},
	} {
		for i := range rs {
			f.Add(uint8(i), uint8(i), v.v, v.quoted, i%2 == 0)
		}
	}
	// A hook-derived member past its rules: a 26-letter name makes a slug past SlugProbe's
	// 20, once stored as it was (the hook's value was not checked).
	for i, r := range rs {
		for m, fl := range r.Fields {
			if r.Name == "SlugProbe" && fl.Name == "GroupName" {
				f.Add(uint8(i), uint8(m), "Abcdefghijklmnopqrstuvwxyz", true, false)
				f.Add(uint8(i), uint8(m), "Abcdefghijklmnopqrstuvwxyz", true, true)
			}
		}
	}
	stores := fuzzStores(f, reg)
	f.Fuzz(func(t *testing.T, which, member uint8, value string, quoted, inPatch bool) {
		r := rs[int(which)%len(rs)]
		fl := r.Fields[int(member)%len(r.Fields)]
		v := value
		if quoted {
			v = `"` + value + `"`
		}
		body, patch := withMember(r, 0, fl.Name, v), withMember(r, 1, "", "")
		if inPatch {
			body, patch = withMember(r, 0, "", ""), `{"`+fl.Name+`":`+v+`}`
		}
		for _, s := range stores {
			roundTrip(t, s, r, []byte(body), []byte(patch))
		}
	})
}

// withMember is a body giving every member a well-formed value (one of two, n) and a new key,
// but member (when not "") the raw JSON value v.
func withMember(r *engine.Resource, n int, member, v string) string {
	var b strings.Builder
	b.WriteString("{")
	for _, f := range r.Fields {
		if b.Len() > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:", f.Name)
		switch {
		case f.Name == member:
			b.WriteString(v)
		case f.Key && f.Type == engine.TypeUUID:
			fmt.Fprintf(&b, "%q", engine.NewID())
		default:
			b.WriteString(seedValue(f, n))
		}
	}
	b.WriteString("}")
	return b.String()
}

// slugProbeYAML is a descriptor of the fuzz targets' only: a group-like record whose slug,
// which the directory's group-slug hook derives from its name, may be longer than its
// maxLength (20, which the seeds' own strings fit; the name's is 40), so that a beforeWrite
// hook's value can break its member's rules, as no shipped descriptor's can today (a group's
// slug is never longer than its name).
const slugProbeYAML = `name: SlugProbe
path: security/slug-probes
table: slug_probes
summary: A name and the slug a hook derives from it (fuzz targets only).
operations: [get, exists, create, update, delete, count, list, search]
key: [ProbeIdentifier]
fields:
  - {name: ProbeIdentifier, type: uuid}
  - {name: GroupName, type: string, required: true, maxLength: 40}
  - {name: GroupSlug, type: string, nullable: true, readOnly: true, maxLength: 20}
  - {name: ProbeCount, type: int, nullable: true}
unique:
  - [GroupSlug]
hooks:
  beforeWrite: [group-slug]
`

// fuzzRegistry loads the descriptors the store-backed fuzz targets write: the shipped ones
// and SlugProbe.
func fuzzRegistry(t testing.TB) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS, fstest.MapFS{"slug-probes.yaml": {Data: []byte(slugProbeYAML)}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// fuzzStores opens the stores a fuzz target writes to (testenv.FuzzBackends): both when its
// seeds run as a test, one while fuzzing.
func fuzzStores(f *testing.F, reg *engine.Registry) []*engine.Store {
	var out []*engine.Store
	for _, b := range testenv.FuzzBackends(f) {
		p := "fuzz"
		if b.Name == "postgres" {
			p = testenv.Partition(f)
		}
		db, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { db.Close() })
		s, _ := db.Store(p)
		out = append(out, s)
	}
	return out
}

// draftCase is a create body and a patch of a resource that FuzzDraftRoundTrip found wanting.
type draftCase struct{ name, resource, body, patch string }

// draftCases are the findings of FuzzDraftRoundTrip, kept as seeds and run on both stores.
var draftCases = []draftCase{
	// An offset with a sign inside it was read as another offset (+05:-1 as +04:59).
	{name: "signed offset minute", resource: "UserComment",
		body:  `{"CommentCreatedBy":"0190a6f0-0000-7000-8000-00000000000a","OrganizationIdentifier":"0190a6f0-0000-7000-8000-00000000000a","UserIdentifier":"0190a6f0-0000-7000-8000-00000000000a","CommentCreated":"2024-03-10T14:30:00+05:-1"}`,
		patch: `{}`},
	{name: "doubled offset sign in a patch", resource: "UserComment",
		body:  `{"CommentCreatedBy":"0190a6f0-0000-7000-8000-00000000000a","OrganizationIdentifier":"0190a6f0-0000-7000-8000-00000000000a","UserIdentifier":"0190a6f0-0000-7000-8000-00000000000a"}`,
		patch: `{"CommentCreated":"2024-03-10T14:30:00++1:00"}`},
	// A beforeWrite hook's value was stored past its member's rules (the slug of a long name).
	{name: "derived slug past its maxLength", resource: "SlugProbe",
		body: `{"GroupName":"Abcdefghijklmnopqrstuvwxyz"}`, patch: `{}`},
	{name: "derived slug past its maxLength in a patch", resource: "SlugProbe",
		body: `{"GroupName":"Abc"}`, patch: `{"GroupName":"Zyxwvutsrqponmlkjihgfedcba"}`},
}

// TestDraftRoundTripCases runs FuzzDraftRoundTrip's findings on every store.
func TestDraftRoundTripCases(t *testing.T) {
	reg := fuzzRegistry(t)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		for _, c := range draftCases {
			t.Run(c.name, func(t *testing.T) {
				roundTrip(t, s, reg.MustByName(c.resource), []byte(c.body), []byte(c.patch))
			})
		}
	})
}

// writable lists the resources a body may create: those with stored members that a client
// gives (`credo load` creates records of every descriptor, the API of the public ones).
func writable(reg *engine.Registry) []*engine.Resource {
	var out []*engine.Resource
	for _, r := range reg.Resources() {
		if len(r.Key) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// seedValue is a well-formed JSON value of f's type, one of two (n).
func seedValue(f *engine.Field, n int) string {
	switch f.Type {
	case engine.TypeString:
		return []string{`"Émilie \"x\" <&>"`, `"a\tb\r\nc"`}[n]
	case engine.TypeUUID:
		return fmt.Sprintf("%q", []string{"0190A6F0-0000-7000-8000-00000000000A", engine.NewID()}[n])
	case engine.TypeBool:
		return []string{"true", "false"}[n]
	case engine.TypeInt:
		return []string{"-2147483648", "2147483647"}[n]
	case engine.TypeDateTime:
		return []string{`"2024-03-10T14:30:00.1234567-06:00"`, `"9999-12-31T23:59:59.9999999Z"`}[n]
	}
	return "null"
}

func roundTrip(t *testing.T, s *engine.Store, r *engine.Resource, body, patch []byte) {
	ctx := context.Background()
	all := engine.AllOrganizations()
	d, err := r.DecodeDraft(body)
	if err != nil {
		var verr *engine.ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("DecodeDraft(%q) = %v, not a ValidationError", body, err)
		}
		return
	}
	rec, err := s.Create(ctx, r, d, all)
	if err != nil {
		refused(t, "create", body, err)
		return
	}
	if d.Problems() != nil {
		t.Fatalf("create of %q with problems %v was accepted", body, d.Problems())
	}
	key := make([]any, len(r.Key))
	for i, k := range r.Key {
		key[i] = rec[k.Index]
	}
	got, err := s.Get(ctx, r, key, nil, all)
	if err != nil {
		t.Fatalf("get %s %v after its create of %q: %v", r.Name, key, body, err)
	}
	readsBack(t, r, body, got, nil)
	obeysRules(t, r, "create", body, got)

	if !r.Offers(engine.OpPatch) {
		return // only `credo load` writes the others, and only creates
	}
	p, err := r.DecodeDraft(patch)
	if err != nil {
		return
	}
	err = s.Patch(ctx, r, key, p, all)
	after, gerr := s.Get(ctx, r, key, nil, all)
	if gerr != nil {
		t.Fatalf("get %s %v after a patch %q: %v", r.Name, key, patch, gerr)
	}
	if err != nil {
		refused(t, "patch", patch, err)
		if a, b := engine.AppendJSON(nil, got, r.Output), engine.AppendJSON(nil, after, r.Output); string(a) != string(b) {
			t.Fatalf("a refused patch %q changed %s\nfrom %s\n  to %s", patch, r.Name, a, b)
		}
		return
	}
	readsBack(t, r, patch, after, got)
	obeysRules(t, r, "patch", patch, after)
}

// obeysRules checks that every stored member of rec, a record read back after a write, obeys
// the rules a client's value is held to (decisions §4), whoever set it: the client, a default
// or a beforeWrite hook (a group's slug, a permission's mask). A string is valid UTF-8 without
// U+0000 and, for a string member, at most its maxLength characters; an int fits in 32 bits.
// Written with the standard library rather than the engine's checks.
func obeysRules(t *testing.T, r *engine.Resource, op string, body []byte, rec engine.Record) {
	t.Helper()
	for _, f := range r.Fields {
		if !f.Stored() || f.WriteOnly {
			continue
		}
		switch v := rec[f.Index].(type) {
		case string:
			if n := utf8.RuneCountInString(v); !utf8.ValidString(v) || strings.ContainsRune(v, 0) || f.Type == engine.TypeString && n > f.MaxLen {
				t.Errorf("%s of %s %.200q stored %s = %.80q (%d characters; maxLength %d), which breaks the member rules", op, r.Name, body, f.Name, v, n, f.MaxLen)
			}
		case int64:
			if v < math.MinInt32 || v > math.MaxInt32 {
				t.Errorf("%s of %s %.200q stored %s = %d, past the 32-bit integers", op, r.Name, body, f.Name, v)
			}
		}
	}
}

// refused checks that a refused write is a client's problem (a 4xx), never a server error.
func refused(t *testing.T, op string, body []byte, err error) {
	t.Helper()
	if !errors.Is(err, engine.ErrInvalid) && !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("%s of %q: %v, neither ErrInvalid nor ErrConflict (a 500)", op, body, err)
	}
}

// readsBack checks that every member body gives reads back in got exactly as sent, and, for a
// patch (before not nil), that every member it does not give kept its value.
func readsBack(t *testing.T, r *engine.Resource, body []byte, got, before engine.Record) {
	t.Helper()
	members, err := engine.DecodeObject(body)
	if err != nil {
		t.Fatalf("%q was accepted but DecodeObject refuses it: %v", body, err)
	}
	for _, f := range r.Output {
		if !f.Stored() || f.ReadOnly || f.WriteOnly {
			continue
		}
		raw, given := members[f.Name]
		if !given {
			if before != nil && !f.Key && !equalValue(before[f.Index], got[f.Index]) {
				t.Errorf("a patch %q without %s changed it from %#v to %#v", body, f.Name, before[f.Index], got[f.Index])
			}
			continue
		}
		if f.Key && string(raw) == "null" {
			continue // a create's null key is a missing one: it gets a new UUID (decisions §4)
		}
		want, err := sentValue(f, raw)
		if err != nil {
			t.Errorf("%s %s = %s was accepted, but it is no %s: %v", r.Name, f.Name, raw, f.Type, err)
			continue
		}
		if !equalValue(want, got[f.Index]) {
			t.Errorf("%s %s: sent %s, read back %#v", r.Name, f.Name, raw, got[f.Index])
		}
	}
}

// sentValue reads a member's JSON value as a client means it, with encoding/json and the time
// package rather than the engine's decoder.
func sentValue(f *engine.Field, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	switch f.Type {
	case engine.TypeString, engine.TypeUUID:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if f.Type == engine.TypeUUID {
			s = strings.ToLower(s)
		}
		return s, nil
	case engine.TypeBool:
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	case engine.TypeInt:
		var n int64
		err := json.Unmarshal(raw, &n)
		return n, err
	case engine.TypeDateTime:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		tm, err := time.Parse("2006-01-02T15:04:05.9999999Z07:00", s)
		return engine.DateTime{Time: tm}, err
	}
	return nil, fmt.Errorf("unknown type %s", f.Type)
}

// equalValue compares record values; datetimes by instant and offset.
func equalValue(a, b any) bool {
	da, okA := a.(engine.DateTime)
	db, okB := b.(engine.DateTime)
	if okA || okB {
		if !okA || !okB {
			return false
		}
		_, oa := da.Zone()
		_, ob := db.Zone()
		return da.Equal(db.Time) && oa == ob
	}
	return a == b
}
