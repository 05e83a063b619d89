package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestErrorsAreWrappedOnce: each verb wraps its error once with its operation and key, also
// when the failure comes from a step it shares with others (the locked read of a conditional
// write, a transaction, a nested verb), and engine.Message gives a client the cause alone.
func TestErrorsAreWrappedOnce(t *testing.T) {
	reg := fixtureRegistry(t)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		w := reg.MustByName("Widget")
		rec := mustCreate(t, s, w, widget("ONCE", ""))
		id := rec.Get(w, "WidgetIdentifier")
		missing := []any{"0190a6f0-0000-7000-8000-0000000000ff"}
		ctx := context.Background()
		cond := engine.WithCondition(ctx, w, &engine.Condition{IfMatch: []string{"*"}})
		draft := func(body string) engine.Draft {
			d, err := w.DecodeDraft([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		_, getErr := s.Get(ctx, w, missing, nil, engine.AllOrganizations())
		_, countErr := s.Count(ctx, w, engine.Query{}, engine.Scope{})
		_, dupErr := testenv.CreateJSON(ctx, s, w, []byte(widget("ONCE2", `,"WidgetIdentifier":"`+id.(string)+`"`)), engine.AllOrganizations())
		cases := []struct {
			name, prefix string
			err          error
		}{
			{name: "get missing", prefix: "engine: get Widget [", err: getErr},
			{name: "count without scope", prefix: "engine: count Widget: ", err: countErr},
			{name: "create on a taken key", prefix: "engine: create Widget: ", err: dupErr},
			{name: "update missing, conditional", prefix: "engine: update Widget [",
				err: s.Update(cond, w, missing, draft(widget("X", "")), engine.AllOrganizations())},
			{name: "patch missing", prefix: "engine: patch Widget [",
				err: s.Patch(ctx, w, missing, draft(`{"WidgetCode":"Y"}`), engine.AllOrganizations())},
			{name: "delete missing, conditional", prefix: "engine: delete Widget [",
				err: s.Delete(cond, w, missing, engine.AllOrganizations())},
			{name: "delete missing", prefix: "engine: delete Widget [",
				err: s.Delete(ctx, w, missing, engine.AllOrganizations())},
		}
		for _, tc := range cases {
			if tc.err == nil {
				t.Errorf("%s: no error", tc.name)
				continue
			}
			msg := tc.err.Error()
			if !strings.HasPrefix(msg, tc.prefix) || strings.Count(msg, "engine:") != 1 {
				t.Errorf("%s: %q, want one %q", tc.name, msg, tc.prefix)
			}
			if errors.Is(tc.err, engine.ErrNoScope) {
				continue // a 500: the client reads no message
			}
			if m := engine.Message(tc.err); strings.Contains(m, "engine:") || strings.Contains(m, "Widget [") {
				t.Errorf("%s: a client reads %q", tc.name, m)
			}
		}
	})
}
