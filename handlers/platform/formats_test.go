package platform_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"credo/handlers/platform"
	"credo/internal/testenv"
)

func TestFormatsTimeRoute(t *testing.T) {
	store := openStore(t, testenv.Backends(t)[0].URL)
	routes := platform.Routes(platform.Config{})

	t.Run("decisions §8 example", func(t *testing.T) {
		w := call(t, routes, store, nil, "platform/formats/time?value=2024-03-10T14:30:00-05:00")
		if w.Code != http.StatusOK {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q", ct)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "formats-time-2024-03-10.json"))
		if err != nil {
			t.Fatal(err)
		}
		var got, exp any
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &exp); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("body differs from testdata/formats-time-2024-03-10.json:\n%s", w.Body)
		}
	})

	bad := []struct {
		name, query, param string
	}{
		{name: "missing", query: "", param: "value"},
		{name: "empty", query: "?value=", param: "value"},
		{name: "no offset", query: "?value=2024-03-10T14:30:00", param: "value"},
		{name: "culture format", query: "?value=3/10/2024+2:30+PM", param: "value"},
		{name: "eight fraction digits", query: "?value=2024-03-10T14:30:00.12345678Z", param: "value"},
		{name: "plus sign decoded as space", query: "?value=2024-03-10T14:30:00+05:00", param: "value"},
		{name: "given twice", query: "?value=2024-03-10T14:30:00Z&value=2024-03-10T14:30:00Z", param: "value"},
		{name: "unknown parameter", query: "?value=2024-03-10T14:30:00Z&Value=x", param: "Value"},
		{name: "NUL", query: "?value=2024-03-10T14:30:00Z%00", param: "value"},
		{name: "invalid UTF-8", query: "?value=%ff", param: "value"},
		{name: "malformed escape", query: "?value=%zz", param: "value"},
		{name: "semicolon", query: "?value=2024-03-10T14:30:00Z;x=1", param: "value"},
		{name: "instant after 9999", query: "?value=9999-12-31T23:00:00-02:00", param: "value"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			w := call(t, routes, store, nil, "platform/formats/time"+tc.query)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			var p struct {
				Status int
				Errors map[string][]string
			}
			if err := json.NewDecoder(bytes.NewReader(w.Body.Bytes())).Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.Status != http.StatusBadRequest || len(p.Errors) != 1 || len(p.Errors[tc.param]) == 0 {
				t.Errorf("got %s, want Errors naming %s only", w.Body, tc.param)
			}
		})
	}
}
