package engine_test

import (
	"context"
	"testing"

	"credo/engine"
)

// TestDraftSetRefusesUnknownMembers: code that builds a draft learns of a misspelt or
// computed member at once, rather than having it dropped.
func TestDraftSetRefusesUnknownMembers(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	d := w.NewDraft()
	for _, name := range []string{"WidgetCod", "widgetcode", "PartCount", ""} {
		if err := d.Set(name, "x"); err == nil {
			t.Errorf("Set(%q): no error", name)
		}
	}
	if err := d.Set("WidgetCode", "D1"); err != nil || !d.Given("WidgetCode") || d.Given("WidgetTitle") {
		t.Errorf("Set(WidgetCode): %v; given %v, WidgetTitle given %v", err, d.Given("WidgetCode"), d.Given("WidgetTitle"))
	}
	if _, err := w.DraftOf(map[string]any{"WidgetCode": "D1", "NoSuchMember": 1}); err == nil {
		t.Error("DraftOf with an unknown member: no error")
	}
}

// TestDraftOfAnotherResourceIsRefused: a verb given a draft of another resource writes nothing.
func TestDraftOfAnotherResourceIsRefused(t *testing.T) {
	reg := fixtureRegistry(t)
	w, part := reg.MustByName("Widget"), reg.MustByName("WidgetPart")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		d, err := part.DraftOf(map[string]any{"PartName": "Sprocket"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(context.Background(), w, d, engine.AllOrganizations()); err == nil {
			t.Error("create of a Widget from a Part draft: no error")
		}
	})
}
