package observe

import "testing"

// TestStripPatterns: gorilla/mux templates lose their regular expressions, braces inside
// them included, so that the route label is the template a reader expects.
func TestStripPatterns(t *testing.T) {
	for in, want := range map[string]string{
		"/livez":                                "/livez",
		"/v2/{partition}/security/users/{key0}": "/v2/{partition}/security/users/{key0}",
		"/api/events/{event:[0-9a-f]{8}-[0-9a-f]{4}}/cancel":   "/api/events/{event}/cancel",
		"/api/x/{a:[0-9]+}/{b:[a-z]{2,3}}":                     "/api/x/{a}/{b}",
		"/api/callback/{activity:(?:[0-9]{1})}/{learner}/tail": "/api/callback/{activity}/{learner}/tail",
	} {
		if got := stripPatterns(in); got != want {
			t.Errorf("stripPatterns(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestValidID: printable ASCII without spaces, 1 to MaxRequestIDLen characters.
func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"a": true, "0190a6f0-0000-7000-8000-0000000000aa": true, "~!#$%&'*+-.^_`|": true,
		"": false, "a b": false, "tab\there": false, "nl\n": false, "é": false, "\x7f": false,
	} {
		if got := validID(id); got != want {
			t.Errorf("validID(%q) = %v", id, got)
		}
	}
	if !validID(newID()) {
		t.Error("a generated id is not valid")
	}
}
