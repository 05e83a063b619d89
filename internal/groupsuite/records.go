package groupsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/engine"
)

// Sample returns valid JSON values for every stored member of r, distinct per n.
func Sample(r *engine.Resource, n int) map[string]any {
	out := map[string]any{}
	for _, f := range r.Fields {
		if f.ReadOnly {
			continue
		}
		out[f.Name] = SampleValue(f, n)
	}
	return out
}

// SampleValue returns a valid JSON value of field f, distinct per n.
func SampleValue(f *engine.Field, n int) any {
	switch f.Type {
	case engine.TypeUUID:
		return uuid.NewString()
	case engine.TypeBool:
		return n%2 == 0
	case engine.TypeInt:
		return 10 + n
	case engine.TypeDateTime:
		return fmt.Sprintf("2024-03-%02dT14:30:00.1234567-06:00", 10+n)
	}
	if strings.Contains(f.Validate, "email") {
		return fmt.Sprintf("user%d.%s@example.com", n, strings.ToLower(uuid.NewString()[:8]))
	}
	s := fmt.Sprintf("%s %d %s", f.Name, n, uuid.NewString()[:8])
	if len(s) > f.MaxLen {
		s = s[len(s)-f.MaxLen:]
	}
	return s
}

// ItemPath returns the item path of a record given its JSON members.
func ItemPath(r *engine.Resource, members map[string]any) string {
	p := r.Path
	for _, k := range r.Key {
		p += "/" + url.PathEscape(fmt.Sprint(members[k.Name]))
	}
	return p
}

// Put stores a record: through POST where the group offers create, else through the engine
// (as credo load does for read-only groups).
func Put(t testing.TB, s *Server, r *engine.Resource, members map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(members)
	if r.Offers(engine.OpCreate) {
		res := s.Do(t, "POST", r.Path, string(body)).Expect(t, "create", http.StatusCreated)
		var got map[string]any
		if err := json.Unmarshal(res.Body, &got); err != nil {
			t.Fatal(err)
		}
		if loc := res.Header.Get("Location"); loc != "/v2/"+s.Partition+"/"+ItemPath(r, got) {
			t.Errorf("create Location %q, want the item path %q", loc, ItemPath(r, got))
		}
		return got
	}
	d, err := r.DecodeDraft(body)
	if err != nil {
		t.Fatalf("load %s: %v", r.Name, err)
	}
	rec, err := s.Store.Create(context.Background(), r, d, engine.AllOrganizations())
	if err != nil {
		t.Fatalf("load %s: %v", r.Name, err)
	}
	var got map[string]any
	if err := json.Unmarshal(engine.AppendJSON(nil, rec, r.Output), &got); err != nil {
		t.Fatal(err)
	}
	return got
}
