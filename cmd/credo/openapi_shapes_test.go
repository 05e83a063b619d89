package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPISharedShapesAreComponents reads the document as a client generator does: an
// inline object schema becomes a type of its own in every place it appears, so a shape that
// two bodies or answers share — two operations, two statuses of one — must be one component
// they reference, or a generated client has two types for one thing (and code converting
// between them).
func TestOpenAPISharedShapesAreComponents(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(document(t), &doc); err != nil {
		t.Fatal(err)
	}
	type content map[string]struct {
		Schema map[string]any `json:"schema"`
	}
	var op struct {
		OperationID string `json:"operationId"`
		RequestBody struct {
			Content content `json:"content"`
		} `json:"requestBody"`
		Responses map[string]struct {
			Content content `json:"content"`
		} `json:"responses"`
	}
	places := map[string]map[string]bool{} // inline object schema → where it appears
	note := func(where string, c content) {
		for _, mt := range c {
			if mt.Schema["type"] != "object" || mt.Schema["properties"] == nil {
				continue
			}
			b, err := json.Marshal(mt.Schema) // maps marshal with sorted keys
			if err != nil {
				t.Fatal(err)
			}
			if places[string(b)] == nil {
				places[string(b)] = map[string]bool{}
			}
			places[string(b)][where] = true
		}
	}
	for _, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" || method == "description" || method == "summary" {
				continue
			}
			op.RequestBody.Content, op.Responses = nil, nil
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			note(op.OperationID+" body", op.RequestBody.Content)
			for status, r := range op.Responses {
				note(op.OperationID+" "+status, r.Content)
			}
		}
	}
	for schema, where := range places {
		if len(where) < 2 {
			continue
		}
		var ws []string
		for w := range where {
			ws = append(ws, w)
		}
		sort.Strings(ws)
		t.Errorf("one inline schema in %s: make it a component they reference\n%.200s", strings.Join(ws, ", "), schema)
	}
}
