package engine_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"gorm.io/gorm/clause"

	"credo/engine"
	"credo/handlers/request"
	"credo/internal/testenv"
)

// TestStoreContainsFoldsCase pins the rule of contains filters on both stores: a substring
// under Go's simple case folding, beyond ASCII, accents kept, %, _ and \ literal, on a stored
// member and through a computed lookup (PartNameLike).
func TestStoreContainsFoldsCase(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	part := reg.MustByName("WidgetPart")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		for code, title := range map[string]string{
			"U1": "Émilie Ørsted",
			"U2": "H. C. örsted",
			"U3": "\u212Aelvin \u017Fcale", // KELVIN SIGN, LATIN SMALL LETTER LONG S
			"U4": "Straße",
			"U5": `Ünï 100% a_b \ c`,
			"U6": "Plain Title",
		} {
			mustCreate(t, s, w, widget(code, fmt.Sprintf(`,"WidgetTitle":%q`, title)))
		}
		u1, _, err := s.List(ctx, w, query(t, w, request.KindList, "WidgetCode=U1"), engine.AllOrganizations())
		if err != nil || len(u1) != 1 {
			t.Fatalf("U1: %v %v", u1, err)
		}
		pid := "0190a6f0-0000-7000-8000-0000000000d1"
		d, err := part.DraftOf(map[string]any{"PartIdentifier": pid, "WidgetIdentifier": u1[0].Get(w, "WidgetIdentifier"), "PartName": "Ørsted Sprocket"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, part, d, engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if err := testenv.PatchJSON(ctx, s, w, []any{u1[0].Get(w, "WidgetIdentifier")}, fmt.Appendf(nil, `{"PartIdentifier":%q}`, pid), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			filter, value, codes string
		}{
			{filter: "WidgetTitle", value: "émilie", codes: "U1"},
			{filter: "WidgetTitle", value: "ÉMILIE", codes: "U1"},
			{filter: "WidgetTitle", value: "ørsted", codes: "U1"},
			{filter: "WidgetTitle", value: "MILIE Ø", codes: "U1"},
			{filter: "WidgetTitle", value: "Émilie Ørsted", codes: "U1"},
			{filter: "WidgetTitle", value: "emilie", codes: ""}, // accents are kept
			{filter: "WidgetTitle", value: "ÖRSTED", codes: "U2"},
			{filter: "WidgetTitle", value: "RSTED", codes: "U1,U2"},
			{filter: "WidgetTitle", value: "TITLE", codes: "U6"},
			{filter: "WidgetTitle", value: "plain t", codes: "U6"},
			{filter: "WidgetTitle", value: "kelvin", codes: "U3"}, // K folds to U+212A
			{filter: "WidgetTitle", value: "SCALE", codes: "U3"},  // S folds to U+017F
			{filter: "WidgetTitle", value: "\u212A", codes: "U3"},
			{filter: "WidgetTitle", value: "straße", codes: "U4"},
			{filter: "WidgetTitle", value: "STRAẞE", codes: "U4"}, // U+1E9E folds to ß
			{filter: "WidgetTitle", value: "strasse", codes: ""},  // one character to one
			{filter: "WidgetTitle", value: "%", codes: "U5"},
			{filter: "WidgetTitle", value: "_", codes: "U5"},
			{filter: "WidgetTitle", value: `\`, codes: "U5"},
			{filter: "WidgetTitle", value: "a_b", codes: "U5"},
			{filter: "WidgetTitle", value: "a%b", codes: ""},
			{filter: "WidgetTitle", value: "ÜNÏ 100% A_B \\ C", codes: "U5"},
			{filter: "WidgetTitle", value: "ünï_100", codes: ""},
			{filter: "WidgetTitle", value: `ünï 100\%`, codes: ""},
			{filter: "WidgetTitle", value: "ü.", codes: ""},
			{filter: "WidgetTitle", value: "(ü)", codes: ""},
			{filter: "PartNameLike", value: "ørsted", codes: "U1"},
			{filter: "PartNameLike", value: "ØRSTED S", codes: "U1"},
			{filter: "PartNameLike", value: "SPROCKET", codes: "U1"},
			{filter: "PartNameLike", value: "orsted", codes: ""},
		} {
			params := url.Values{tt.filter: {tt.value}}.Encode()
			recs, _, err := s.List(ctx, w, query(t, w, request.KindList, params), engine.AllOrganizations())
			if err != nil {
				t.Fatalf("%s=%q: %v", tt.filter, tt.value, err)
			}
			var codes []string
			for _, r := range recs {
				codes = append(codes, r.Get(w, "WidgetCode").(string))
			}
			if got := strings.Join(codes, ","); got != tt.codes {
				t.Errorf("%s=%q: got %q, want %q", tt.filter, tt.value, got, tt.codes)
			}
			n, err := s.Count(ctx, w, query(t, w, request.KindCount, params), engine.AllOrganizations())
			if err != nil || int(n) != len(codes) {
				t.Errorf("count %s=%q: %d %v, want %d", tt.filter, tt.value, n, err, len(codes))
			}
		}
	})
}

// TestStoreContainsAgreesWithEqualFold runs the condition of a contains filter in the
// database, on both stores, for random values and filters with unusual fold orbits and LIKE's
// and regular expressions' metacharacters, and compares it with the rule.
func TestStoreContainsAgreesWithEqualFold(t *testing.T) {
	eachStore(t, fixtureRegistry(t), func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		for _, p := range engine.FoldPairs(400) {
			h, n := p[0], p[1]
			var got []int
			cond := s.Contains(clause.Expr{SQL: "CAST(? AS TEXT)", Vars: []any{h}}, n)
			if err := s.DB(ctx).Raw("SELECT 1 WHERE ?", cond).Scan(&got).Error; err != nil {
				t.Fatalf("%q contains %q: %v", h, n, err)
			}
			if want := engine.FoldContainsSpec(h, n); (len(got) == 1) != want {
				t.Errorf("%q contains %q: %v, want %v", h, n, len(got) == 1, want)
			}
		}
	})
}
