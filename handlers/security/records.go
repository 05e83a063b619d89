package security

import (
	"context"
	"fmt"
	"time"

	"credo/engine"
)

// records are the descriptors the package reads and writes, resolved once by resolveRecords:
// by New for the server, so that a registry without one fails start-up rather than a
// request, and by the tools (CreateSecret, RevokeSecret, ListSecrets) when they start.
type records struct {
	clientSecret, issuedToken, revokedToken, signingKey, membership, group, permission, person, user, organization *engine.Resource
}

// resolveRecords resolves the package's descriptors in reg.
func resolveRecords(reg *engine.Registry) (*records, error) {
	rs := &records{}
	for _, n := range []struct {
		dst  **engine.Resource
		name string
	}{
		{&rs.clientSecret, "ClientSecret"}, {&rs.issuedToken, "IssuedToken"}, {&rs.revokedToken, "RevokedToken"},
		{&rs.signingKey, "SigningKey"}, {&rs.membership, "Membership"}, {&rs.group, "Group"},
		{&rs.permission, "Permission"}, {&rs.person, "Person"}, {&rs.user, "User"}, {&rs.organization, "Organization"},
	} {
		r, ok := reg.ByName(n.name)
		if !ok {
			return nil, fmt.Errorf("security: no %s descriptor", n.name)
		}
		*n.dst = r
	}
	return rs, nil
}

// members returns the named members of r, in order.
func members(r *engine.Resource, names ...string) ([]*engine.Field, error) {
	out := make([]*engine.Field, len(names))
	for i, n := range names {
		f, ok := r.Member(n)
		if !ok {
			return nil, fmt.Errorf("security: %s has no member %s", r.Name, n)
		}
		out[i] = f
	}
	return out, nil
}

// same is a value that a member matches by identity (engine.MatchSame): as the member's
// unique constraint compares it, such as a user's Email ignoring ASCII case.
type same string

// eq is the query whose every named member equals its value (or, for a []string value, is
// one of them; for a same value, is it by identity), projecting fields; pairs alternate member
// name and value.
func eq(r *engine.Resource, fields []string, pairs ...any) (engine.Query, error) {
	proj, err := members(r, fields...)
	if err != nil {
		return engine.Query{}, err
	}
	q := engine.Query{Fields: proj, Format: engine.FormatJSON}
	for i := 0; i+1 < len(pairs); i += 2 {
		name, _ := pairs[i].(string)
		f, ok := r.Member(name)
		if !ok {
			return engine.Query{}, fmt.Errorf("security: %s has no member %s", r.Name, name)
		}
		op, v := engine.MatchEq, pairs[i+1]
		switch x := v.(type) {
		case []string:
			op = engine.MatchIn
		case same:
			op, v = engine.MatchSame, string(x)
		}
		q.Conds = append(q.Conds, engine.Cond{Field: f, Op: op, Value: v})
	}
	return q, nil
}

// all returns every record of r matching the pairs (see eq), projected to fields.
func all(ctx context.Context, st *engine.Store, r *engine.Resource, fields []string, pairs ...any) ([]engine.Record, error) {
	q, err := eq(r, fields, pairs...)
	if err != nil {
		return nil, err
	}
	var out []engine.Record
	err = st.Stream(ctx, r, q, engine.AllOrganizations(), func(rec engine.Record) error {
		out = append(out, rec)
		return nil
	})
	return out, err
}

// insert stores a new record of r from member values (names to values) and returns it.
func insert(ctx context.Context, st *engine.Store, r *engine.Resource, values map[string]any) (engine.Record, error) {
	d, err := r.DraftOf(values)
	if err != nil {
		return nil, fmt.Errorf("security: %w", err)
	}
	return st.Create(ctx, r, d, engine.AllOrganizations())
}

// str returns a string member's value, "" when null.
func str(r *engine.Resource, rec engine.Record, name string) string {
	s, _ := rec.Get(r, name).(string)
	return s
}

// when returns a datetime member's value, the zero time when null.
func when(r *engine.Resource, rec engine.Record, name string) time.Time {
	d, _ := rec.Get(r, name).(engine.DateTime)
	return d.Time
}

// dateTime converts an instant to a stored datetime in UTC.
func dateTime(t time.Time) engine.DateTime {
	return engine.DateTime{Time: t.UTC().Truncate(100 * time.Nanosecond)}
}
