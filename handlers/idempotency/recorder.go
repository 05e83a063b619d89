package idempotency

import (
	"bytes"
	"net/http"
)

// unkept are the response headers that belong to one exchange, not to the answer a retry
// gets: the retry's own request id, date and length, and any cookie (a credential is never
// handed out twice).
var unkept = map[string]bool{"Set-Cookie": true, "Date": true, "Content-Length": true, "X-Request-Id": true,
	ReplayedHeader: true}

// recorder holds the answer of the first request until it is kept, then sends it.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

var _ http.ResponseWriter = (*recorder)(nil)

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// answer is what a retry is to get. A handler that wrote nothing answered 200, as net/http
// sends.
func (r *recorder) answer() *answer {
	a := &answer{status: r.status, header: http.Header{}, body: r.body.Bytes()}
	if a.status == 0 {
		a.status = http.StatusOK
	}
	for name, vs := range r.header {
		if !unkept[name] {
			a.header[name] = vs
		}
	}
	return a
}

// send passes the recorded answer on to w; a handler that wrote nothing (a failure whose
// client left, which problem.Write does not answer) leaves w untouched too.
func (r *recorder) send(w http.ResponseWriter) error {
	if r.status == 0 && len(r.header) == 0 {
		return nil
	}
	for name, vs := range r.header {
		w.Header()[name] = vs
	}
	if r.status != 0 {
		w.WriteHeader(r.status)
	}
	_, err := w.Write(r.body.Bytes())
	return err
}
