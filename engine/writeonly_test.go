package engine_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/request"
	"credo/internal/testenv"
)

// The secret-bearing User members (decisions §7).
var userSecrets = []string{"DefaultPassword", "MultiFactorAuthenticationCode", "OldUserPasswordHash", "UserPasswordHash"}

// storedColumns reads a user's secret columns as the database holds them.
func storedColumns(t *testing.T, s *engine.Store, users *engine.Resource, id string) map[string]string {
	t.Helper()
	var row struct{ DefaultPassword, MultiFactorAuthenticationCode, OldUserPasswordHash, UserPasswordHash string }
	err := s.DB(context.Background()).Raw(`SELECT default_password AS "default_password", multi_factor_authentication_code AS "multi_factor_authentication_code", `+
		`old_user_password_hash AS "old_user_password_hash", user_password_hash AS "user_password_hash" FROM `+s.Table(users)+` WHERE user_identifier = ?`, id).Scan(&row).Error
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"DefaultPassword": row.DefaultPassword, "MultiFactorAuthenticationCode": row.MultiFactorAuthenticationCode,
		"OldUserPasswordHash": row.OldUserPasswordHash, "UserPasswordHash": row.UserPasswordHash}
}

// TestWriteOnlyMembers: the four secret-bearing User members are accepted by writes, stored
// (DefaultPassword and MultiFactorAuthenticationCode only as argon2id hashes of the value),
// never part of a record the engine returns, and refused as filters, sorts and projections.
// A PATCH that does not name them writes the stored hashes back unchanged, and a PUT that
// omits them keeps them.
func TestWriteOnlyMembers(t *testing.T) {
	reg := fixtureRegistry(t)
	users := reg.MustByName("User")
	for _, name := range userSecrets {
		f, _ := users.Member(name)
		if f == nil || !f.WriteOnly || f.Output {
			t.Fatalf("%s is not write-only", name)
		}
	}
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		body := `{"Email":"w@example.com","FullName":"W","DefaultPassword":"initial-pw","MultiFactorAuthenticationCode":"123456",` +
			`"OldUserPasswordHash":"$2a$10$old","UserPasswordHash":"$2a$10$current"}`
		rec, err := testenv.CreateJSON(ctx, s, users, []byte(body), engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		id := rec.Get(users, "UserIdentifier").(string)
		out := string(engine.AppendJSON(nil, rec, users.Output))
		got, err := s.Get(ctx, users, []any{id}, nil, engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		out += string(engine.AppendJSON(nil, got, users.Output))
		for _, name := range userSecrets {
			if strings.Contains(out, `"`+name+`"`) {
				t.Errorf("a returned record carries %s: %s", name, out)
			}
			// Not even where no encoding of the output would show it.
			if v := rec.Get(users, name); v != nil {
				t.Errorf("the record create returned holds %s = %v", name, v)
			}
		}
		for _, secret := range []string{"initial-pw", "123456", "$2a$10$"} {
			if strings.Contains(out, secret) {
				t.Errorf("a returned record carries the value %q: %s", secret, out)
			}
		}

		cols := storedColumns(t, s, users, id)
		for name, plain := range map[string]string{"DefaultPassword": "initial-pw", "MultiFactorAuthenticationCode": "123456"} {
			if c := cols[name]; !strings.HasPrefix(c, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(c, plain) || !engine.VerifyHash(c, plain) {
				t.Errorf("%s is stored as %q, want an argon2id hash of the value", name, c)
			}
			if engine.VerifyHash(cols[name], plain+"x") {
				t.Errorf("%s's hash verifies another value", name)
			}
		}
		if cols["OldUserPasswordHash"] != "$2a$10$old" || cols["UserPasswordHash"] != "$2a$10$current" {
			t.Errorf("password hashes stored as %q, %q; want them as given", cols["OldUserPasswordHash"], cols["UserPasswordHash"])
		}
		if a, b := cols["DefaultPassword"], storedColumns(t, s, users, id)["DefaultPassword"]; a != b {
			t.Fatal("reading a user changed its stored hash")
		}

		// A patch that does not name them leaves the stored hashes as they are.
		if err := testenv.PatchJSON(ctx, s, users, []any{id}, []byte(`{"FirstName":"Wanda"}`), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if after := storedColumns(t, s, users, id); after["DefaultPassword"] != cols["DefaultPassword"] ||
			after["MultiFactorAuthenticationCode"] != cols["MultiFactorAuthenticationCode"] || after["UserPasswordHash"] != cols["UserPasswordHash"] {
			t.Errorf("a patch of FirstName changed the secrets: %v, was %v", after, cols)
		}
		// A patch that names one hashes the new value, and leaves the ETag as it was: the ETag
		// is computed over the members a reader sees, so that a reader holding one learns
		// nothing of a change of a secret (and a change of only a secret fails no If-Match).
		etag := func() string {
			got, err := s.Get(ctx, users, []any{id}, users.Output, engine.AllOrganizations())
			if err != nil {
				t.Fatal(err)
			}
			return users.ETag(got)
		}
		before := etag()
		if err := testenv.PatchJSON(ctx, s, users, []any{id}, []byte(`{"DefaultPassword":"second-pw"}`), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if err := testenv.PatchJSON(ctx, s, users, []any{id}, []byte(`{"OldUserPasswordHash":"$2a$10$changed"}`), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if now := etag(); now != before {
			t.Errorf("changing only secrets changed the ETag from %s to %s", before, now)
		}
		if err := testenv.PatchJSON(ctx, s, users, []any{id}, []byte(`{"OldUserPasswordHash":"$2a$10$old"}`), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		after := storedColumns(t, s, users, id)
		if !engine.VerifyHash(after["DefaultPassword"], "second-pw") || after["MultiFactorAuthenticationCode"] != cols["MultiFactorAuthenticationCode"] {
			t.Errorf("patching DefaultPassword stored %v", after)
		}
		// A PUT without them keeps them (a client cannot read them back to send them).
		if err := testenv.UpdateJSON(ctx, s, users, []any{id}, []byte(`{"Email":"w@example.com","FullName":"W2"}`), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if kept := storedColumns(t, s, users, id); kept["DefaultPassword"] != after["DefaultPassword"] || kept["UserPasswordHash"] != "$2a$10$current" {
			t.Errorf("a PUT omitting the secrets changed them: %v", kept)
		}
		// An explicit empty value clears one.
		if err := testenv.UpdateJSON(ctx, s, users, []any{id}, []byte(`{"Email":"w@example.com","FullName":"W2","MultiFactorAuthenticationCode":""}`), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if c := storedColumns(t, s, users, id)["MultiFactorAuthenticationCode"]; c != "" {
			t.Errorf("an empty MultiFactorAuthenticationCode stored %q", c)
		}

		// The bulk load (credo load) hashes too.
		drafts, err := users.DecodeArray([]byte(`[{"Email":"bulk@example.com","DefaultPassword":"bulk-pw"}]`))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.InsertAll(ctx, users, drafts, engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		var dp string
		if err := s.DB(ctx).Raw(`SELECT default_password FROM `+s.Table(users)+` WHERE email = ?`, "bulk@example.com").Scan(&dp).Error; err != nil {
			t.Fatal(err)
		}
		if !engine.VerifyHash(dp, "bulk-pw") {
			t.Errorf("a loaded DefaultPassword is stored as %q", dp)
		}
	})
}

// TestWriteOnlyQueries: a filter, Sort, Includes or Excludes naming a write-only member is a
// 400 naming it; the member is in no projection.
func TestWriteOnlyQueries(t *testing.T) {
	users := fixtureRegistry(t).MustByName("User")
	for _, name := range userSecrets {
		for _, tc := range []struct{ param, value, member string }{
			{name, "x", name},
			{"Sort", name, "Sort"},
			{"Sort", "FullName," + name + " desc", "Sort"},
			{"Includes", "Email," + name, "Includes"},
			{"Excludes", name, "Excludes"},
		} {
			_, err := request.ListQuery(users, url.Values{tc.param: {tc.value}}, request.KindList)
			var verr *engine.ValidationError
			if err == nil || !asValidation(err, &verr) || len(verr.Fields[tc.member]) == 0 || !strings.Contains(strings.Join(verr.Fields[tc.member], " "), name) {
				t.Errorf("%s=%s: %v, want a 400 naming %s under %s", tc.param, tc.value, err, name, tc.member)
			}
		}
		if _, err := request.Fields(users, url.Values{"Includes": {name}}); err == nil {
			t.Errorf("get Includes=%s accepted", name)
		}
	}
	q, err := request.ListQuery(users, url.Values{}, request.KindList)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(engine.Names(q.Fields))
	for _, name := range userSecrets {
		if strings.Contains(string(b), `"`+name+`"`) {
			t.Errorf("the list projection %s holds %s", b, name)
		}
	}
}

func asValidation(err error, target **engine.ValidationError) bool {
	v, ok := err.(*engine.ValidationError)
	if ok {
		*target = v
	}
	return ok
}
