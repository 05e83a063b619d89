package engine_test

import (
	"testing"

	"credo/engine"
)

// TestParseUUID: the canonical form in any case is accepted and returned lower-case; any other
// form is refused. A lower-case UUID (what clients send) is returned without an allocation.
func TestParseUUID(t *testing.T) {
	const lower = "0190a6f0-1c2b-7d3e-8f4a-5b6c7d8e9fa0"
	cases := []struct {
		in, want string
		ok       bool
	}{
		{in: lower, want: lower, ok: true},
		{in: "0190A6F0-1C2B-7D3E-8F4A-5B6C7D8E9FA0", want: lower, ok: true},
		{in: "0190a6F0-1c2b-7d3e-8f4a-5b6c7d8e9fa0", want: lower, ok: true},
		{in: "00000000-0000-0000-0000-000000000000", want: "00000000-0000-0000-0000-000000000000", ok: true},
		{in: "0190a6f01c2b7d3e8f4a5b6c7d8e9fa0"},
		{in: "{0190a6f0-1c2b-7d3e-8f4a-5b6c7d8e9fa0}"},
		{in: "urn:uuid:0190a6f0-1c2b-7d3e-8f4a-5b6c7d8e9fa0"},
		{in: "0190a6f0-1c2b-7d3e-8f4a-5b6c7d8e9fag"},
		{in: "0190a6f0+1c2b-7d3e-8f4a-5b6c7d8e9fa0"},
		{in: ""},
	}
	for _, tc := range cases {
		got, err := engine.ParseUUID(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseUUID(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = engine.ParseUUID(lower) }); n != 0 {
		t.Errorf("ParseUUID of a lower-case UUID allocates %v times", n)
	}
}

// BenchmarkParseUUID: a key segment of a get, as clients send it.
func BenchmarkParseUUID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := engine.ParseUUID("0190a6f0-1c2b-7d3e-8f4a-5b6c7d8e9fa0"); err != nil {
			b.Fatal(err)
		}
	}
}
