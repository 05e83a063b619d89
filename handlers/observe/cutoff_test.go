package observe_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"credo/handlers/observe"
)

// lockedBuffer is a log destination that a test reads while the server writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAccessLineSaysAnAnswerWasCutOff: an answer whose writing to the client failed midway (the
// client went away; a slow reader past the write timeout and a shutdown that abandons the
// request end the same way) is logged with the status it began with and aborted=true, so that
// the line of a truncated answer does not read as a complete 200; a whole answer says nothing.
func TestAccessLineSaysAnAnswerWasCutOff(t *testing.T) {
	var log lockedBuffer
	o := observe.New(observe.Options{Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	ts := httptest.NewServer(o.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 1
		if r.URL.Path == "/large" {
			n = 1024 // 64 MiB: more than any socket buffers, so writing blocks until the client reads
		}
		for range n {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})))
	defer ts.Close()
	lines := func(want int) []map[string]any {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			raw := strings.Split(strings.TrimSpace(log.String()), "\n")
			if len(raw) >= want && raw[0] != "" || time.Now().After(deadline) {
				var out []map[string]any
				for _, l := range raw {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatalf("line %q: %v", l, err)
					}
					out = append(out, m)
				}
				return out
			}
		}
	}
	res, err := http.Get(ts.URL + "/whole")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	res, err = http.Get(ts.URL + "/large")
	if err != nil {
		t.Fatal(err)
	}
	io.CopyN(io.Discard, res.Body, 1<<20)
	res.Body.Close() // the client goes away with most of the answer unread
	got := lines(2)
	if len(got) != 2 {
		t.Fatalf("%d access lines, want 2: %s", len(got), log.String())
	}
	if got[0]["status"] != float64(200) || got[0]["aborted"] != nil {
		t.Errorf("the whole answer's line: %v, want status 200 and no aborted", got[0])
	}
	if got[1]["status"] != float64(200) || got[1]["aborted"] != true {
		t.Errorf("the cut-off answer's line: %v, want status 200 with aborted=true", got[1])
	}
}
