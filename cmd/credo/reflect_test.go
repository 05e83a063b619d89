package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"credo/internal/testenv"
)

// TestHostileInputIsNotEchoed: a client's names, values, paths and headers — a member name of
// almost 1 MiB, query parameters of 8 KiB, U+0000, invalid UTF-8, CR LF, an ANSI escape, U+202E
// — come back in a problem document (its Title, Detail, Instance, Errors keys and messages) and
// its headers bounded, printable and valid UTF-8 (engine.ShownName, Quoted, ShownPath), on v2,
// its modules and version 1, over real HTTP, on both stores; the server's log lines stay one
// line each, escaped and bounded. They were echoed whole: a 512 KiB member name made a problem
// of 1.5 MiB, an ESC or a CR LF in a parameter name came back as itself.
func TestHostileInputIsNotEchoed(t *testing.T) {
	const nameBytes = 1<<20 - 512 // within every 1 MiB body limit
	hostile := []struct{ name, text string }{
		{"long", strings.Repeat("n", 8<<10)},
		{"NUL", "a\x00b"},
		{"invalid UTF-8", "a\xffb"},
		{"CR LF", "a\r\nX-Evil: 1"},
		{"ESC", "\x1b[2Jx"},
		{"U+202E", "a\u202eb"},
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			var log lockedBuffer
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
			t.Cleanup(func() { slog.SetDefault(prev) })
			srv := newFuzzServer(t, b, &log)
			ts := httptest.NewServer(srv.h)
			t.Cleanup(ts.Close)
			v2 := "/v2/" + srv.partition + "/"
			const item = "0190a6f0-0000-7000-8000-00000000000a" // no record: a version-1 event
			res, created := rawHTTP(t, ts.Listener.Addr().String(), "POST", v2+"security/users-comments",
				fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q}`, srv.user, srv.org, srv.user), srv.token, nil)
			var comment struct{ CommentIdentifier string }
			if err := json.Unmarshal(created, &comment); err != nil || res.StatusCode != http.StatusCreated {
				t.Fatalf("create a comment: %d %s", res.StatusCode, created)
			}
			stored := v2 + "security/users-comments/" + comment.CommentIdentifier // PATCH judges a body's members only of a record that exists

			type request struct {
				what, method, target, body string
				header                     map[string]string
				anonymous                  bool
				want                       string // in the problem: how it names what was wrong
			}
			var reqs []request
			for _, h := range hostile {
				q := url.QueryEscape(h.text)
				for _, target := range []string{
					v2 + "security/users-comments", v2 + "security/users-comments/count", v2 + "security/users-comments/" + item,
					v2 + "progress/gradebooks/export", v2 + "platform/formats/time", v2 + "platform/routes/settings",
					"/api/events/list-events", "/api/events/scrap-paper",
				} {
					reqs = append(reqs, request{what: "parameter name", method: "GET", target: target + "?" + q + "=1"})
				}
				for _, param := range []string{"Sort", "Includes", "Excludes", "Take", "Page", "Format", "Continue", "CommentText", "CommentCreated", "UserIdentifier", "Origin.Reason", "Filter.Sort"} {
					reqs = append(reqs, request{what: param, method: "GET", target: v2 + "security/users-comments?" + param + "=" + q})
				}
				reqs = append(reqs,
					request{what: "date", method: "GET", target: "/api/events/list-events?date=" + q},
					request{what: "key segment", method: "GET", target: v2 + "security/users-comments/" + q},
					request{what: "unrouted path", method: "GET", target: v2 + "nosuch/" + q},
					request{what: "partition", method: "GET", target: "/v2/" + q + "/platform/health"},
					request{what: "export key", method: "GET", target: v2 + "progress/gradebooks/download/" + q},
					request{what: "token id", method: "DELETE", target: v2 + "security/tokens/" + q},
					request{what: "version-1 segment", method: "GET", target: "/api/registrations/" + q},
					request{what: "anonymous path", method: "GET", target: v2 + "security/users-comments/" + q, anonymous: true},
				)
				header := strings.NewReplacer("\r", "", "\n", "").Replace(h.text) // a header cannot hold CR LF
				for _, name := range []string{"Accept", "Content-Type", "If-Match", "If-None-Match", "Idempotency-Key", "X-Request-Id", "Origin"} {
					reqs = append(reqs, request{what: name, method: "PATCH", target: stored, body: `{}`, header: map[string]string{name: header}})
				}
				for _, m := range []string{"CommentCreated", "UserIdentifier", "CommentIdentifier"} {
					reqs = append(reqs, request{what: m + " value", method: "POST", target: v2 + "security/users-comments", body: `{"` + m + `":` + rawJSON(h.text) + `}`})
				}
			}
			method := strings.Repeat("M", 8<<10) // a token, as net/http requires, of 8 KiB
			reqs = append(reqs,
				request{what: "method", method: method, target: v2 + "platform/health"},
				request{what: "method", method: method, target: v2 + "nosuch"},
				request{what: "method", method: method, target: "/api/events/classes"})
			// Member names in every reader of JSON bodies: unknown, given twice, nested.
			names := []struct{ what, json, want string }{
				{"a long name", `"` + strings.Repeat("m", nameBytes) + `"`, fmt.Sprintf(`"%s"… (%d bytes)`, strings.Repeat("m", 64), nameBytes)},
				{"a name with NUL", `"a\u0000b"`, `"a\x00b"`},
				{"a name of invalid UTF-8", "\"a\xffb\"", `"a\xffb"`},
				{"a name with CR LF", `"a\r\nX-Evil: 1"`, `"a\r\nX-Evil: 1"`},
				{"a name with ESC", `"\u001b[2Jx"`, `"\x1b[2Jx"`},
				{"a name with U+202E", `"a\u202eb"`, `"a\u202eb"`},
			}
			for _, n := range names {
				for _, target := range []string{
					v2 + "security/users-comments", stored,
					v2 + "security/tokens/generate", v2 + "api/plugin/cmds/compliance-summaries",
					"/api/registrations/search", "/api/events/" + item,
				} {
					method := "POST"
					if target == stored {
						method = "PATCH"
					}
					reqs = append(reqs,
						request{what: n.what, method: method, target: target, body: "{" + n.json + ":1}", want: n.want},
						request{what: n.what + " twice", method: method, target: target, body: "{" + n.json + ":1," + n.json + ":2}", want: n.want})
				}
				reqs = append(reqs, request{what: n.what + " in an import row", method: "POST", target: v2 + "contact/persons/import", body: "[{" + n.json + `:"x"}]`, want: n.want})
			}

			// tokens/generate takes 64 KiB: a name of 60 KiB is read, one of 1 MiB a 413.
			reqs = append(reqs, request{what: "a long name", method: "POST", target: v2 + "security/tokens/generate", anonymous: true,
				body: `{"` + strings.Repeat("m", 60<<10) + `":1}`, want: fmt.Sprintf(`"%s"… (%d bytes)`, strings.Repeat("m", 64), 60<<10)})

			for _, rq := range reqs {
				bearer := srv.token
				if rq.anonymous {
					bearer = ""
				}
				res, body := rawHTTP(t, ts.Listener.Addr().String(), rq.method, rq.target, rq.body, bearer, rq.header)
				what := fmt.Sprintf("%s %.60q (%s)", rq.method, rq.target, rq.what)
				if res.StatusCode >= 500 {
					t.Errorf("%s: %d %.300s", what, res.StatusCode, body)
					continue
				}
				for name, vs := range res.Header {
					for _, v := range vs {
						if name != "Set-Cookie" && len(v) > 512 || !shownText(v) {
							t.Errorf("%s: header %s is %d bytes: %.100q", what, name, len(v), v)
						}
					}
				}
				if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") {
					continue
				}
				if len(body) > 4<<10 {
					t.Errorf("%s: a problem of %d bytes: %.200s", what, len(body), body)
				}
				var doc struct {
					Title, Detail, Instance string
					Errors                  map[string][]string
				}
				if err := json.Unmarshal(body, &doc); err != nil {
					t.Errorf("%s: %v: %.200s", what, err, body)
					continue
				}
				texts := []string{doc.Title, doc.Detail, doc.Instance}
				for k, msgs := range doc.Errors {
					texts = append(append(texts, k), msgs...)
				}
				for _, s := range texts {
					if len(s) > 1<<10 || !shownText(s) {
						t.Errorf("%s: the problem shows %d bytes: %.200q", what, len(s), s)
					}
				}
				if rq.want != "" && res.StatusCode != http.StatusRequestEntityTooLarge && !bytes.Contains(body, mustJSON(rq.want)) {
					t.Errorf("%s: the problem does not name %s: %.300s", what, rq.want, body)
				}
			}
			for _, line := range strings.SplitAfter(log.String(), "\n") {
				if line == "" {
					continue
				}
				if len(line) > 8<<10 || !strings.HasSuffix(line, "\n") || !shownText(strings.TrimSuffix(line, "\n")) {
					t.Errorf("a log line of %d bytes is not one escaped line: %.300q", len(line), line)
				}
			}
		})
	}
}

// shownText reports whether s is valid UTF-8 without control characters, format characters
// (U+202E…) or U+FFFD, the mark of bytes that were not UTF-8.
func shownText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) || c == utf8.RuneError {
			return false
		}
	}
	return true
}

// rawJSON returns s as a JSON string whose bytes from 0x80 up are sent as they are, valid
// UTF-8 or not (encoding/json would send invalid bytes as U+FFFD).
func rawJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mustJSON returns s as it appears inside a JSON string.
func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}

// rawHTTP sends one request over a new connection to addr, its target and header values byte
// for byte as given (net/http's client refuses some), and reads the answer.
func rawHTTP(t *testing.T, addr, method, target, body, bearer string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var raw bytes.Buffer
	fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: credo.test\r\nConnection: close\r\nContent-Length: %d\r\n", method, target, len(body))
	if body != "" {
		if _, set := header["Content-Type"]; !set {
			raw.WriteString("Content-Type: application/json\r\n")
		}
	}
	if bearer != "" {
		fmt.Fprintf(&raw, "Authorization: Bearer %s\r\n", bearer)
	}
	for k, v := range header {
		fmt.Fprintf(&raw, "%s: %s\r\n", k, v)
	}
	raw.WriteString("\r\n" + body)
	// The server may answer before it has read the whole body (a 413) and close the
	// connection: the answer is read while the request is written.
	written := make(chan error, 1)
	go func() {
		_, err := conn.Write(raw.Bytes())
		written <- err
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %.60q: %v (writing: %v)", method, target, err, <-written)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	<-written
	return res, out.Bytes()
}

// lockedBuffer is a log destination that the server's goroutines write at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
