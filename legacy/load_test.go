package legacy

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/engine"
)

// TestLoadFiles loads testdata/legacy (the `credo load` examples of docs/v1.md: JSON arrays and
// CSV with a header row of descriptor field names) and uses them through the API.
func TestLoadFiles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, f := range []struct{ resource, file string }{
			{"Venue", "venues.csv"}, {"BillingCode", "billing-codes.csv"}, {"AssessmentForm", "assessment-forms.json"},
			{"Event", "events.json"}, {"Registration", "registrations.json"}, {"Accommodation", "accommodations.csv"},
		} {
			r := registry.MustByName(f.resource)
			data, err := os.ReadFile(filepath.Join("..", "testdata", "legacy", f.file))
			if err != nil {
				t.Fatal(err)
			}
			drafts := decodeLoadFile(t, r, f.file, data)
			if err := e.store.InsertAll(context.Background(), r, drafts, engine.AllOrganizations()); err != nil {
				t.Fatalf("%s: %v", f.file, err)
			}
		}
		got := e.ok("GET", regPath("0190a6f0-0000-7000-8000-0000000007b1", ""), "")
		if got["EventNumber"] != 501.0 || got["AssessmentFormCode"] != "WELD-1" || got["TimeLimit"] != 195.0 ||
			len(got["Accommodations"].([]any)) != 2 || got["LearnerName"] != "Ada Lovelace" {
			t.Fatalf("loaded registration: %v", got)
		}
		reg := e.ok("POST", regPath(rid(1), "register-lax"), `{"EventVenue":"0190a6f0-0000-7000-8000-0000000007a1",`+
			`"EventStart":"2030-06-03T15:00:30Z","Learner":"`+alan+`","Assessment":"WELD-1"}`)
		if reg["Event"] != "0190a6f0-0000-7000-8000-0000000007e1" || reg["EventCreated"] != false {
			t.Fatalf("register onto the loaded event: %v", reg)
		}
		if got := e.ok("GET", regPath(rid(1), ""), ""); got["AssessmentFormTitle"] != "Welder Level 1 Exam" || got["TimeLimit"] != 180.0 {
			t.Fatalf("loaded form: %v %v", got["AssessmentFormTitle"], got["TimeLimit"])
		}
		reg = e.ok("POST", regPath(rid(2), "register-lax"), `{"EventVenue":"0190a6f0-0000-7000-8000-0000000007a2",`+
			`"EventStart":"2030-06-04T09:00:00Z","EventExamType":"Test","EventExamFormat":"Online","EventBillingCode":"CHAL",`+
			`"Learner":"`+alan+`","Assessment":"WELD-1"}`)
		if reg["EventCreated"] != true {
			t.Fatalf("new event with a loaded billing code: %v", reg)
		}
	})
}

// decodeLoadFile reads a file as `credo load` does: a JSON array, or CSV with a header row.
func decodeLoadFile(t *testing.T, r *engine.Resource, name string, data []byte) []engine.Draft {
	t.Helper()
	if strings.HasSuffix(name, ".json") {
		drafts, err := r.DecodeArray(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, d := range drafts {
			if err := d.Problems(); err != nil {
				t.Fatalf("%s row %d: %v", name, i, err)
			}
		}
		return drafts
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	header, err := r.CSVHeader(rows[0])
	if err != nil {
		t.Fatalf("%s header: %v", name, err)
	}
	var drafts []engine.Draft
	for i, cells := range rows[1:] {
		d := header.DecodeRow(cells)
		if err := d.Problems(); err != nil {
			t.Fatalf("%s row %d: %v", name, i, err)
		}
		drafts = append(drafts, d)
	}
	return drafts
}
