package compliance

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"credo/auth"
	"credo/engine"
	"credo/handlers/route"
)

// Path is the route of the compliance-summaries command, relative to /v2/{partition}/; it is
// also its permission object.
const Path = "api/plugin/cmds/compliance-summaries"

// Routes returns the compliance plugin's routes for the v2 router.
func Routes() []route.Route {
	return []route.Route{{
		Method:  http.MethodPost,
		Path:    Path,
		Summary: "Compliance status counts and scores per department, learner and measurement.",
		Access:  route.Protected,
		Object:  Path,
		Need:    "Execute",
		Handler: serveSummaries,
	}}
}

// serveSummaries decodes the body, runs the one query within the caller's organization and
// streams the JSON array. Nothing is written before the first row is read, so a failing query
// is still a problem document.
func serveSummaries(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st := engine.StoreFrom(ctx)
	if st == nil {
		return errors.New("compliance: no partition store in the request context")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		return fmt.Errorf("compliance: read body: %w", err)
	}
	q, err := DecodeRequest(body)
	if err != nil {
		return err
	}
	out := &arrayWriter{w: w}
	err = Summaries(ctx, st, q, auth.FromContext(ctx).Scope(), out.write)
	if err != nil && out.started {
		// The status line is gone: break the response rather than end a truncated array.
		slog.Error("compliance summaries failed mid-response", "path", r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		return err
	}
	return out.close()
}

// arrayWriter streams summaries as one JSON array through a buffer.
type arrayWriter struct {
	w       http.ResponseWriter
	buf     *bufio.Writer
	started bool // bytes have reached w
}

func (a *arrayWriter) begin() {
	a.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	a.buf = bufio.NewWriterSize(startWriter{a}, 32<<10)
	_ = a.buf.WriteByte('[')
}

func (a *arrayWriter) write(s *Summary) error {
	if a.buf == nil {
		a.begin()
	} else {
		_ = a.buf.WriteByte(',')
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("compliance: encode summary: %w", err)
	}
	_, err = a.buf.Write(b)
	return err
}

func (a *arrayWriter) close() error {
	if a.buf == nil {
		a.begin()
	}
	_, _ = a.buf.WriteString("]\n")
	return a.buf.Flush()
}

// startWriter records that the response has started before passing bytes on.
type startWriter struct{ a *arrayWriter }

func (s startWriter) Write(p []byte) (int, error) {
	s.a.started = true
	return s.a.w.Write(p)
}
