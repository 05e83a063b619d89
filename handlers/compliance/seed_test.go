package compliance

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"credo/auth"
)

func TestSeed(t *testing.T) {
	orgC := "0190a6f0-0000-7000-8000-00000000000c"
	for name, st := range openStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			loadDirectory(t, st)
			// Organization C has departments and people but no memberships.
			group, person := st.Registry().MustByName("Group"), st.Registry().MustByName("Person")
			for i, n := range []string{"Kitchen", "Front Desk"} {
				if err := insert(ctx, st, group, map[string]any{"GroupIdentifier": id("d", 20+i), "OrganizationIdentifier": orgC,
					"GroupName": n, "GroupType": "department"}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 3 {
				if err := insert(ctx, st, person, map[string]any{"UserIdentifier": id("u", 50+i), "OrganizationIdentifier": orgC,
					"FullName": "Cook " + string(rune('A'+i)), "PersonCode": "C" + string(rune('A'+i))}); err != nil {
					t.Fatal(err)
				}
			}
			operator := &auth.Principal{Operator: true}
			read := func() [3][]Summary {
				var out [3][]Summary
				for v, body := range []string{`{"ProfileCondition":1}`, `{"ProfileCondition":2}`, `{"ProfileCondition":3}`} {
					out[v] = summariesOf(t, st, operator, body)
				}
				return out
			}
			if err := Seed(ctx, st, rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatal(err)
			}
			first := read()
			if err := Seed(ctx, st, rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatal(err)
			}
			if again := read(); !reflect.DeepEqual(first, again) {
				t.Fatal("Seed with the same rng state wrote different data")
			}
			// 16 department memberships in A, 1 in B, 3 people dealt over C's departments.
			if n := len(first[2]); n != (16+1+3)*18 {
				t.Fatalf("%d rows in the all-profiles variant", n)
			}
			var required int64
			for i, all := range first[2] {
				prim, mand := first[0][i].Measurement, first[1][i].Measurement
				m := all.Measurement
				required += m.Required
				if !reflect.DeepEqual(first[0][i].Learner, all.Learner) || !reflect.DeepEqual(first[0][i].Department, all.Department) || prim.Key != m.Key {
					t.Fatalf("variants are not aligned at row %d", i)
				}
				if prim.Required > m.Required || mand.Required > m.Required || prim.Satisfied > m.Satisfied || mand.Satisfied > m.Satisfied {
					t.Fatalf("row %d: primary %+v or mandatory %+v exceeds all %+v", i, prim, mand, m)
				}
				if m.Key >= 7 && m.Key <= 10 && mand.Required != 0 {
					t.Fatalf("row %d: optional measurement %d in the mandatory variant", i, m.Key)
				}
				if m.Satisfied+m.Expired+m.NotCompleted+m.NotApplicable+m.NeedsTraining != m.Required ||
					m.Validated > m.Satisfied || m.Submitted > m.NotCompleted {
					t.Fatalf("row %d: inconsistent counts %+v", i, m)
				}
				if all.PrimaryProfile == nil && prim.Required != 0 {
					t.Fatalf("row %d: primary requirements without a primary profile", i)
				}
			}
			if required == 0 {
				t.Fatal("Seed required nothing")
			}
		})
	}
}
