package handlers

import (
	"net/http/httptest"
	"testing"

	"credo/engine"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		accept string
		csvOK  bool
		want   engine.Format // "" means 406
	}{
		{accept: "", want: engine.FormatJSON},
		{accept: "*/*", want: engine.FormatJSON},
		{accept: "application/json", csvOK: true, want: engine.FormatJSON},
		{accept: "text/csv", csvOK: true, want: engine.FormatCSV},
		{accept: "text/csv", want: ""},
		{accept: "text/csv;q=0.9, application/json;q=0.5", csvOK: true, want: engine.FormatCSV},
		{accept: "text/csv;q=0.4, application/json", csvOK: true, want: engine.FormatJSON},
		{accept: "application/json;q=0", want: ""},
		{accept: "application/json;q=abc", want: ""},
		{accept: "application/xml", csvOK: true, want: ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		if tt.accept != "" {
			r.Header.Set("Accept", tt.accept)
		}
		w := httptest.NewRecorder()
		w.Header().Set("Vary", "Origin")
		got, err := negotiate(w, r, tt.csvOK)
		if got != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("negotiate(%q, csv %t) = %q, %v; want %q", tt.accept, tt.csvOK, got, err, tt.want)
		}
		negotiate(w, r, tt.csvOK) // a second negotiation names Accept once
		if v := w.Header().Values("Vary"); len(v) != 2 || v[0] != "Origin" || v[1] != "Accept" {
			t.Errorf("negotiate(%q): Vary %q, want [Origin Accept]", tt.accept, v)
		}
	}
}
