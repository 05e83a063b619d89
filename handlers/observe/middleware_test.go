package observe_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"credo/handlers/limit"
	"credo/handlers/observe"
)

// TestAccessLineClient: with ClientAddress (serve passes the abuse limits' Clients), the access
// line names the client as the limits count it — behind a trusted proxy, the address in
// X-Forwarded-For — beside the socket's peer; without it, only the peer.
func TestAccessLineClient(t *testing.T) {
	proxies, err := limit.ParseProxies("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		client func(*http.Request) string
		remote string
		want   any // the client field; nil: absent
	}{
		{name: "behind a trusted proxy", client: proxies.Address, remote: "10.1.2.3:4567", want: "203.0.113.7"},
		{name: "from an untrusted peer", client: proxies.Address, remote: "198.51.100.2:4567", want: "198.51.100.2"},
		{name: "without ClientAddress", remote: "10.1.2.3:4567"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			o := observe.New(observe.Options{Logger: slog.New(slog.NewJSONHandler(&log, nil)), ClientAddress: tc.client})
			req := httptest.NewRequest(http.MethodGet, "/x", nil)
			req.RemoteAddr = tc.remote
			req.Header.Set("X-Forwarded-For", "203.0.113.7")
			o.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})).ServeHTTP(httptest.NewRecorder(), req)
			var line map[string]any
			if err := json.Unmarshal(log.Bytes(), &line); err != nil {
				t.Fatalf("access line %q: %v", log.String(), err)
			}
			if line["remote"] != tc.remote || line["client"] != tc.want {
				t.Errorf("remote %v, client %v; want %v, %v", line["remote"], line["client"], tc.remote, tc.want)
			}
		})
	}
}
