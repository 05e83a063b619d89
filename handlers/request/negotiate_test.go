package request_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"credo/handlers/problem"
	"credo/handlers/request"
)

func TestNegotiate(t *testing.T) {
	json := request.Offer{Type: "application/json", Aliases: []string{"text/json"}}
	many := []request.Offer{{Type: "application/json"}, {Type: "text/json"}, {Type: "application/xml"}, {Type: "text/html"}}
	pdf := []request.Offer{{Type: "application/pdf"}}
	tests := []struct {
		accept string
		offers []request.Offer
		want   string // "" means 406
	}{
		{accept: "", offers: many, want: "application/json"},
		{accept: "  ", offers: pdf, want: "application/pdf"},
		{accept: "*/*", offers: pdf, want: "application/pdf"},
		{accept: "application/*", offers: many, want: "application/json"},
		{accept: "text/*", offers: many, want: "text/json"},
		{accept: "text/*", offers: pdf, want: ""},
		{accept: "text/html", offers: many, want: "text/html"},
		{accept: "text/json", offers: many, want: "text/json"},                         // an offer itself before an alias
		{accept: "text/json", offers: []request.Offer{json}, want: "application/json"}, // an alias
		{accept: "application/json;q=0.5, text/html", offers: many, want: "text/html"},
		{accept: "text/html;q=0.5, application/xml;q=0.5", offers: many, want: "text/html"}, // a tie: the first range
		{accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", offers: many, want: "text/html"},
		{accept: "application/pdf;q=0", offers: pdf, want: ""},
		{accept: "application/pdf;q=high", offers: pdf, want: ""},
		{accept: "application/pdf;q=high, */*;q=0.1", offers: pdf, want: "application/pdf"},
		{accept: "image/png", offers: many, want: ""},
		{accept: "not a media type", offers: many, want: ""},
	}
	for _, tt := range tests {
		got, err := request.Negotiate(tt.accept, tt.offers...)
		if got != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("Negotiate(%q) = %q, %v; want %q", tt.accept, got, err, tt.want)
		}
		var p *problem.Problem
		if err != nil && (!errors.As(err, &p) || p.Status != http.StatusNotAcceptable || !strings.Contains(p.Detail, tt.offers[0].Type)) {
			t.Errorf("Negotiate(%q): %v, want a 406 naming the offers", tt.accept, err)
		}
	}
}

// TestAddVary: a header's name is added to Vary once, whatever the case and the list it
// stands in, not beside "*", and finding it there allocates nothing (every get negotiates).
func TestAddVary(t *testing.T) {
	for _, tc := range []struct {
		have []string
		want []string
	}{
		{have: nil, want: []string{"Accept"}},
		{have: []string{"Origin"}, want: []string{"Origin", "Accept"}},
		{have: []string{"Origin, accept"}, want: []string{"Origin, accept"}},
		{have: []string{"Origin,Accept-Encoding"}, want: []string{"Origin,Accept-Encoding", "Accept"}},
		{have: []string{"Origin", " ACCEPT "}, want: []string{"Origin", " ACCEPT "}},
		{have: []string{"*"}, want: []string{"*"}},
	} {
		h := http.Header{}
		for _, v := range tc.have {
			h.Add("Vary", v)
		}
		request.AddVary(h, "Accept")
		if got := h.Values("Vary"); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Vary %q: after AddVary %q, want %q", tc.have, got, tc.want)
		}
	}
	h := http.Header{"Vary": {"Origin, Accept"}}
	if n := testing.AllocsPerRun(100, func() { request.AddVary(h, "Accept") }); n != 0 {
		t.Errorf("AddVary of a name Vary holds allocates %v times, want none", n)
	}
}
