package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestOpenAPIMarksWriteOnly: the OpenAPI document marks every write-only member writeOnly in
// the group's input schema and leaves it out of the record and search schemas (decisions §7).
func TestOpenAPIMarksWriteOnly(t *testing.T) {
	reg := registry(t)
	doc := servedDocument(t, reg)
	n := 0
	for _, r := range reg.Public() {
		for _, f := range r.Fields {
			if !f.WriteOnly {
				continue
			}
			n++
			// The record schema lists it as writeOnly (so no answer may carry it), and so does
			// the input schema where the group takes writes; the reduced search record lacks it.
			schemas := []string{r.Name}
			if r.Offers(engine.OpCreate) || r.Offers(engine.OpUpdate) {
				schemas = append(schemas, r.Name+"Input", r.Name+"Patch")
			}
			for _, schema := range schemas {
				if p := doc.Components.Schemas[schema].Properties[f.Name]; p["writeOnly"] != true {
					t.Errorf("%s.%s is %v, want writeOnly", schema, f.Name, p)
				}
			}
			if _, ok := doc.Components.Schemas[r.Name+"Search"].Properties[f.Name]; ok {
				t.Errorf("the %sSearch schema lists the write-only %s", r.Name, f.Name)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d write-only members, want User's four", n)
	}
}

// apiDocument is the part of the served OpenAPI document that the member tests read.
type apiDocument struct {
	Components struct {
		Schemas map[string]struct {
			Properties map[string]map[string]any
		}
	}
}

// servedDocument serves reg and reads its OpenAPI document.
func servedDocument(t *testing.T, reg *engine.Registry) apiDocument {
	t.Helper()
	ts := newTestServer(t, testenv.Backends(t)[0], reg)
	res := ts.do(t, "GET", "openapi.json", "").expect(t, "openapi", http.StatusOK)
	var doc apiDocument
	if err := json.Unmarshal(res.body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
