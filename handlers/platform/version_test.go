package platform_test

import (
	"net/http"
	"testing"

	"credo/handlers/platform"
	"credo/internal/testenv"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in                            string
		major, minor, build, revision int
	}{
		{in: "v25.2.3-4-gabc", major: 25, minor: 2, build: 3, revision: 4},
		{in: "v25.2.3-4-gabc1234-dirty", major: 25, minor: 2, build: 3, revision: 4},
		{in: "v0.1.0-dev", major: 0, minor: 1, build: 0},
		{in: "v25.2", major: 25, minor: 2},
		{in: "v25.2-12-g0f3e9a1", major: 25, minor: 2, revision: 12},
		{in: "25.2.1", major: 25, minor: 2, build: 1},
		{in: "1.2.3.4", major: 1, minor: 2, build: 3, revision: 4},
		{in: "1.2.3.4-5-gabc", major: 1, minor: 2, build: 3, revision: 4},
		{in: "v1.2.3-rc.1", major: 1, minor: 2, build: 3},
		{in: "v1.2.3+build.7", major: 1, minor: 2, build: 3},
		{in: "v1.2.3-4-gXYZ", major: 1, minor: 2, build: 3},
		{in: "v1.2.3-dirty", major: 1, minor: 2, build: 3},
		{in: "v1..2", major: 1},
		{in: "v1.99999999999", major: 1},
		{in: "V7", major: 7},
		{in: "dev"},
		{in: "(devel)"},
		{in: "2b77592-dirty"},
		{in: "v1.2b", major: 1},
		{in: "abc1234"},
		{in: ""},
	}
	for _, tc := range tests {
		got := platform.ParseVersion(tc.in)
		want := platform.Version{Version: tc.in, Major: tc.major, Minor: tc.minor, Build: tc.build, Revision: tc.revision}
		if got != want {
			t.Errorf("ParseVersion(%q) = %+v, want %+v", tc.in, got, want)
		}
	}
}

func TestVersionRoute(t *testing.T) {
	store := openStore(t, testenv.Backends(t)[0].URL)
	w := call(t, platform.Routes(platform.Config{Version: "v25.2.3-4-gabc"}), store, nil, "platform/version")
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var got platform.Version
	decode(t, w, &got)
	if want := (platform.Version{Version: "v25.2.3-4-gabc", Major: 25, Minor: 2, Build: 3, Revision: 4}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
