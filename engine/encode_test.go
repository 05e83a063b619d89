package engine_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"credo/engine"
)

// TestAppendJSONStringMatchesEncodingJSON holds the hand-written string encoder to
// encoding/json's output, HTML escaping and invalid UTF-8 included.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", `quote " and \ backslash`, "<a href='x'>&amp;</a>", "tab\tnew\nline\rcr\x00\x1f\x7f",
		"é ü 漢字 🎓", "\u2028 and \u2029", "bad \xff\xfe utf-8", "\xc3", "trailing \\"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := engine.AppendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}
