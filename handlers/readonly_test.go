package handlers_test

import (
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIMarksReadOnly: a stored read-only member (the descriptor's readOnly: derived by a
// hook, or set by the group's write check from the caller) is marked readOnly in the record's
// schema, with a description saying the server sets it, and is left out of the bodies, so that
// a generated client has no field to send it with: Permission's mask and audit members.
func TestOpenAPIMarksReadOnly(t *testing.T) {
	reg := registry(t)
	doc := servedDocument(t, reg)
	var marked []string
	for _, r := range reg.Public() {
		for _, f := range r.Fields {
			if !f.ReadOnly {
				continue
			}
			marked = append(marked, r.Name+"."+f.Name)
			p := doc.Components.Schemas[r.Name].Properties[f.Name]
			if d, _ := p["description"].(string); p["readOnly"] != true || !strings.HasPrefix(d, "Read-only: set by the server") {
				t.Errorf("%s.%s is %v, want readOnly with a description", r.Name, f.Name, p)
			}
			for _, body := range []string{r.Name + "Input", r.Name + "Patch"} {
				if _, ok := doc.Components.Schemas[body].Properties[f.Name]; ok {
					t.Errorf("%s lists the read-only %s", body, f.Name)
				}
			}
		}
	}
	slices.Sort(marked)
	want := []string{"Permission.OrganizationIdentifier", "Permission.PermissionGranted", "Permission.PermissionGrantedBy", "Permission.PermissionMask"}
	if !slices.Equal(marked, want) {
		t.Errorf("read-only members %v, want %v", marked, want)
	}
}
