package request_test

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/request"
)

// TestParseQueryRefuses: what url.ParseQuery drops or keeps silently is a problem naming the
// parameter (as written when its name cannot be read).
func TestParseQueryRefuses(t *testing.T) {
	tests := []struct {
		raw, param, says string
	}{
		{raw: "Take=%zz", param: "Take", says: "malformed"},
		{raw: "Take=%2", param: "Take", says: "malformed"},
		{raw: "%zz=1", param: "%zz", says: "malformed"},
		{raw: "Page=1&%zz", param: "%zz", says: "malformed"},
		{raw: "Take=5;Sort=Nope", param: "Take", says: "';'"},
		{raw: "a;b=1", param: "a;b", says: "';'"},
		{raw: "Name=a%00b", param: "Name", says: "U+0000"},
		{raw: "Name=%ff", param: "Name", says: "UTF-8"},
		{raw: "Name=%c3%28", param: "Name", says: "UTF-8"},
		{raw: "Name=%ed%a0%80", param: "Name", says: "UTF-8"},
		{raw: "Name=%c0%af", param: "Name", says: "UTF-8"},
		{raw: "%ff=1", param: `"\xff"`, says: "UTF-8"},
		{raw: "N%00=1", param: `"N\x00"`, says: "U+0000"},
	}
	for _, tt := range tests {
		_, err := request.ParseQuery(tt.raw)
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("ParseQuery(%q) = %v, want a ValidationError", tt.raw, err)
			continue
		}
		if msgs := verr.Fields[tt.param]; len(msgs) == 0 || !strings.Contains(msgs[0], tt.says) {
			t.Errorf("ParseQuery(%q) problems %v, want %s named with %q", tt.raw, verr.Fields, tt.param, tt.says)
		}
	}
}

// TestParseQueryAgrees: a well-formed query string reads exactly as url.ParseQuery reads it.
func TestParseQueryAgrees(t *testing.T) {
	for _, raw := range []string{
		"", "a=1", "a=1&b=2&a=3", "a=1&&b=2", "a", "a=", "=x", "Sort=FullName+desc%2CEmail",
		"Name=%C3%A9t%C3%A9", "x=%3B", "Origin.When=2024-03-10T14:30:00%2B01:00", "emoji=%F0%9F%98%80",
	} {
		got, err := request.ParseQuery(raw)
		if err != nil {
			t.Errorf("ParseQuery(%q): %v", raw, err)
			continue
		}
		want, _ := url.ParseQuery(raw)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseQuery(%q) = %v, want %v", raw, got, want)
		}
	}
}
