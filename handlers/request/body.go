package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"credo/engine"
	"credo/handlers/deadline"
	"credo/handlers/problem"
)

// MaxBodyBytes caps request bodies unless an operation names another limit (decisions §3:
// 1 MiB; the people import takes 32 MiB); a larger body is a 413.
const MaxBodyBytes = 1 << 20

// Body reads a request body that must be JSON: a Content-Type other than JSON
// (application/json, or any +json type such as application/merge-patch+json) is a 415; no
// Content-Type is taken as JSON. See Read for the size limit and broken bodies.
func Body(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !IsJSON(ct) {
		return nil, problem.New(http.StatusUnsupportedMediaType, "Content-Type %s is not JSON; send application/json.", engine.Quoted(ct))
	}
	return Read(w, r, limit)
}

// Object reads a JSON body (see Body) that must be one JSON object, through the one JSON
// reader engine.DecodeObject (repeated members, invalid UTF-8, lone surrogates and U+0000 are
// 400s naming the member). An empty body is an empty object: the modules and version 1 take
// bodies whose every member is optional.
func Object(w http.ResponseWriter, r *http.Request, limit int64) (map[string]json.RawMessage, error) {
	b, err := Body(w, r, limit)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	return engine.DecodeObject(b)
}

// Read reads a request body of any type, of at most limit bytes: a larger one is a 413
// (*http.MaxBytesError). A body that breaks off — a malformed chunked encoding, fewer bytes
// than Content-Length says, a client that goes away — is a 400 problem, never a server error
// (when the client is gone, nobody reads it). A body larger than one ReadTimeout carries keeps
// moving the connection's read deadline while it arrives at a steady rate (deadline.Body).
func Read(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, deadline.Body(w, r), limit))
	if err == nil {
		return b, nil
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("request: read body: %w", err)
	}
	// Always a 400, also when the client has gone (the request's context is then cancelled):
	// writing nothing would make net/http answer 200 to a client that only half-closed.
	return nil, problem.New(http.StatusBadRequest, "The request body could not be read: %v.", err)
}

// MergePatchType is the media type of a JSON merge patch (RFC 7396), and AcceptPatch the
// Accept-Patch header (RFC 5789 §3.1) of the PATCH operations: a merge patch, which
// application/json is taken as too.
const (
	MergePatchType = "application/merge-patch+json"
	AcceptPatch    = MergePatchType + ", application/json"
)

// IsMergePatch reports whether a Content-Type names a body that PATCH takes: a JSON merge patch
// or plain JSON. Other JSON types (application/json-patch+json) are other patch formats.
func IsMergePatch(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == MergePatchType || mt == "application/json")
}

// IsJSON reports whether a Content-Type names JSON.
func IsJSON(ct string) bool {
	if ct == "application/json" {
		return true // what most clients send, without parsing parameters into a map
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
