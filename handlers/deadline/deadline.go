// Package deadline lets a long response or upload move its connection's deadlines forward as
// it progresses, so that the server's ReadTimeout and WriteTimeout cut off clients that stall
// without cutting off large transfers that keep moving.
package deadline

import (
	"io"
	"net/http"
	"time"
)

// Chunk is the most a Writer passes to the connection between two deadline moves, and the
// least a Reader must receive to earn another ReadTimeout: a client that moves less than
// Chunk per timeout is cut off, whatever it sends.
const Chunk = 64 << 10

// server returns the http.Server serving r, nil outside one (httptest.NewRecorder).
func server(r *http.Request) *http.Server {
	s, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	return s
}

// Writer returns a writer to dst (the response, or a file the response waits for) that
// before each Chunk moves the write deadline of w's connection to the server's WriteTimeout
// from now. Without a WriteTimeout it returns dst.
func Writer(w http.ResponseWriter, r *http.Request, dst io.Writer) io.Writer {
	s := server(r)
	if s == nil || s.WriteTimeout <= 0 {
		return dst
	}
	return &writer{dst: dst, rc: http.NewResponseController(w), timeout: s.WriteTimeout}
}

type writer struct {
	dst     io.Writer
	rc      *http.ResponseController
	timeout time.Duration
	left    int // bytes that may still be written before the deadline moves again
}

func (d *writer) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if d.left <= 0 {
			// An error means the writer cannot move deadlines (not a net/http connection);
			// the server's own deadline then stands.
			_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
			d.left = Chunk
		}
		c := min(len(p), d.left)
		m, err := d.dst.Write(p[:c])
		n += m
		d.left -= m
		if err != nil {
			return n, err
		}
		p = p[c:]
	}
	return n, nil
}

// Body returns r.Body wrapped so that, each time another Chunk has arrived, it moves the
// read deadline of w's connection to the server's ReadTimeout from now: for uploads larger
// than one ReadTimeout carries at a slow but steady rate. Without a ReadTimeout it returns
// r.Body.
func Body(w http.ResponseWriter, r *http.Request) io.ReadCloser {
	s := server(r)
	if s == nil || s.ReadTimeout <= 0 {
		return r.Body
	}
	return &reader{ReadCloser: r.Body, rc: http.NewResponseController(w), timeout: s.ReadTimeout}
}

type reader struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	got     int
}

func (d *reader) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	d.got += n
	if d.got >= Chunk {
		d.got = 0
		_ = d.rc.SetReadDeadline(time.Now().Add(d.timeout))
	}
	return n, err
}

// Extend gives the rest of the request a fresh WriteTimeout: for a handler that has read a
// large upload and now works on it before answering.
func Extend(w http.ResponseWriter, r *http.Request) {
	if s := server(r); s != nil && s.WriteTimeout > 0 {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.WriteTimeout))
	}
}
