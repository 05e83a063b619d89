package deadline_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"credo/handlers/deadline"
)

// size is larger than what loopback socket buffers absorb, so the server's writes wait for
// the client's reads.
const size = 48 << 20

// slowRead reads a response a piece at a time with pauses, taking several write timeouts.
func slowRead(t *testing.T, url string) (int64, error) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var n int64
	buf := make([]byte, 1<<20)
	for {
		m, err := io.ReadFull(res.Body, buf)
		n += int64(m)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// TestWriterOutlivesTheWriteTimeout: a response much longer than the WriteTimeout reaches a
// client that keeps reading when it goes through Writer, and is cut off without it.
func TestWriterOutlivesTheWriteTimeout(t *testing.T) {
	body := bytes.Repeat([]byte("x"), size)
	for _, tc := range []struct {
		name  string
		wrap  bool
		whole bool
	}{{name: "through Writer", wrap: true, whole: true}, {name: "plain", wrap: false, whole: false}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var out io.Writer = w
				if tc.wrap {
					out = deadline.Writer(w, r, w)
				}
				out.Write(body)
			}))
			ts.Config.WriteTimeout = 300 * time.Millisecond
			ts.Start()
			defer ts.Close()
			start := time.Now()
			n, _ := slowRead(t, ts.URL)
			if took := time.Since(start); tc.whole && took < 2*ts.Config.WriteTimeout {
				t.Fatalf("the read took %s, not longer than the timeout: the test proves nothing", took)
			}
			if (n == size) != tc.whole {
				t.Errorf("read %d of %d bytes", n, size)
			}
		})
	}
}

// TestWriterCutsOffAStalledClient: a client that stops reading is cut off after one
// WriteTimeout even through Writer.
func TestWriterCutsOffAStalledClient(t *testing.T) {
	done := make(chan error, 1)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := deadline.Writer(w, r, w).Write(bytes.Repeat([]byte("x"), size))
		done <- err
	}))
	ts.Config.WriteTimeout = 300 * time.Millisecond
	ts.Start()
	defer ts.Close()
	res, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("write to a stalled client: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write to a stalled client never ended")
	}
}

// TestBody: a body that arrives in steady chunks is read past the ReadTimeout; one that
// trickles is cut off.
func TestBody(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, deadline.Body(w, r))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		w.Write([]byte(strings.Repeat("y", int(n%10))))
	}))
	ts.Config.ReadTimeout = 400 * time.Millisecond
	ts.Start()
	defer ts.Close()
	send := func(chunk int, pause time.Duration, chunks int) (int, error) {
		pr, pw := io.Pipe()
		go func() {
			for range chunks {
				time.Sleep(pause)
				if _, err := pw.Write(bytes.Repeat([]byte("b"), chunk)); err != nil {
					return
				}
			}
			pw.Close()
		}()
		res, err := http.Post(ts.URL, "application/octet-stream", pr)
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	}
	if st, err := send(deadline.Chunk, 100*time.Millisecond, 10); err != nil || st != http.StatusOK {
		t.Errorf("steady upload over 1 s: %d %v", st, err)
	}
	if st, err := send(1, 100*time.Millisecond, 10); err == nil && st == http.StatusOK {
		t.Errorf("a trickling upload over 1 s was read whole")
	}
}
