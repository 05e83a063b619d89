package engine_test

import (
	"context"
	"errors"
	"testing"

	"credo/engine"
)

// TestReadOnlyMembers: a read-only member (a Permission's audit members and mask) is dropped
// from an API body (DecodeDraft) and taken from a file's row (DecodeFileDraft, a CSV row),
// where null is refused for a member that is not nullable; a beforeWrite hook still derives
// its member from a file. Left out, it takes its zero value or null. A write check may set
// read-only members of the record it lets through, and create, update and patch store them.
func TestReadOnlyMembers(t *testing.T) {
	reg := loadGroups(t)
	perm := reg.MustByName("Permission")
	const (
		group   = "0190a6f0-0000-7000-8000-000000000601"
		object  = "0190a6f0-0000-7000-8000-000000000701"
		grantor = "0190a6f0-0000-7000-8000-000000000101"
		org     = "0190a6f0-0000-7000-8000-00000000000a"
		granted = "2001-02-03T04:05:06.5-06:00"
		checker = "0190a6f0-0000-7000-8000-000000000102"
	)
	body := func(id, object string) []byte {
		return []byte(`{"PermissionIdentifier":"` + id + `","GroupIdentifier":"` + group + `","ObjectIdentifier":"` + object +
			`","AllowRead":true,"PermissionMask":999,"OrganizationIdentifier":"` + org + `","PermissionGrantedBy":"` + grantor +
			`","PermissionGranted":"` + granted + `"}`)
	}
	when, _ := engine.ParseDateTime(granted)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		all := engine.AllOrganizations()
		get := func(id string) engine.Record {
			t.Helper()
			rec, err := s.Get(ctx, perm, []any{id}, nil, all)
			if err != nil {
				t.Fatal(err)
			}
			return rec
		}
		audit := func(what string, rec engine.Record, org, by any, at any) {
			t.Helper()
			got := []any{rec.Get(perm, "OrganizationIdentifier"), rec.Get(perm, "PermissionGrantedBy"), rec.Get(perm, "PermissionGranted")}
			if got[0] != org || got[1] != by || (at == nil) != (got[2] == nil) ||
				(at != nil && !got[2].(engine.DateTime).Equal(at.(engine.DateTime).Time)) {
				t.Errorf("%s: organization, grantor, time %v, want %v %v %v", what, got, org, by, at)
			}
			if m := rec.Get(perm, "PermissionMask"); m != int64(2) {
				t.Errorf("%s: PermissionMask %v, want 2 (derived)", what, m)
			}
		}

		api := engine.NewID()
		d, err := perm.DecodeDraft(body(api, object))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, perm, d, all); err != nil {
			t.Fatal(err)
		}
		audit("an API body", get(api), "00000000-0000-0000-0000-000000000000", nil, nil)

		file := engine.NewID()
		if d, err = perm.DecodeFileDraft(body(file, engine.NewID())); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, perm, d, all); err != nil {
			t.Fatal(err)
		}
		audit("a file's row", get(file), org, grantor, when)

		h, err := perm.CSVHeader([]string{"GroupIdentifier", "ObjectIdentifier", "AllowRead", "OrganizationIdentifier", "PermissionGrantedBy", "PermissionGranted"})
		if err != nil {
			t.Fatal(err)
		}
		if d = h.DecodeRow([]string{group, engine.NewID(), "true", org, grantor, granted}); d.Problems() != nil {
			t.Fatal(d.Problems())
		}
		rec, err := s.Create(ctx, perm, d, all)
		if err != nil {
			t.Fatal(err)
		}
		audit("a CSV row", get(rec.Get(perm, "PermissionIdentifier").(string)), org, grantor, when)

		null := []byte(`{"GroupIdentifier":"` + group + `","ObjectIdentifier":"` + engine.NewID() + `","OrganizationIdentifier":null}`)
		if d, err = perm.DecodeFileDraft(null); err != nil {
			t.Fatal(err)
		}
		var verr *engine.ValidationError
		if _, err := s.Create(ctx, perm, d, all); !errors.As(err, &verr) || len(verr.Fields["OrganizationIdentifier"]) == 0 {
			t.Errorf("a file's null OrganizationIdentifier: %v, want a problem naming it", err)
		}

		// A write check sets read-only members of what it lets through (the server's
		// permission-grant check does so with the caller); every verb stores them.
		stamp := engine.WithWriteCheck(ctx, perm, func(_ context.Context, _ *engine.Store, r *engine.Resource, _, rec engine.Record) error {
			if rec != nil {
				rec.Set(r, "PermissionGrantedBy", checker)
				rec.Set(r, "OrganizationIdentifier", org)
				rec.Set(r, "PermissionGranted", when)
			}
			return nil
		})
		checked := engine.NewID()
		if d, err = perm.DecodeDraft(body(checked, engine.NewID())); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(stamp, perm, d, all); err != nil {
			t.Fatal(err)
		}
		audit("create with a check", get(checked), org, checker, when)
		for _, write := range []struct {
			name string
			verb func(*engine.Store, context.Context, *engine.Resource, []any, engine.Draft, engine.Scope) error
		}{{"update", (*engine.Store).Update}, {"patch", (*engine.Store).Patch}} {
			if d, err = perm.DecodeDraft([]byte(`{"GroupIdentifier":"` + group + `","ObjectIdentifier":"` + object + `","AllowRead":true}`)); err != nil {
				t.Fatal(err)
			}
			if err := write.verb(s, stamp, perm, []any{api}, d, all); err != nil {
				t.Fatal(err)
			}
			audit(write.name+" with a check", get(api), org, checker, when)
			// Without the check, a PATCH keeps the stored members and a PUT clears them.
			if d, err = perm.DecodeDraft([]byte(`{"GroupIdentifier":"` + group + `","ObjectIdentifier":"` + object + `","AllowRead":true}`)); err != nil {
				t.Fatal(err)
			}
			if err := write.verb(s, ctx, perm, []any{api}, d, all); err != nil {
				t.Fatal(err)
			}
			if write.name == "patch" {
				audit("patch without a check", get(api), org, checker, when)
			} else {
				audit("update without a check", get(api), "00000000-0000-0000-0000-000000000000", nil, nil)
			}
		}
	})
}
