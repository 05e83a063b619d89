package people

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"credo/auth"
	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/route"
)

// Path is the import route, relative to /v2/{partition}/; Object is the permission object it
// needs Create on.
const (
	Path   = "contact/persons/import"
	Object = "directory/people"
)

// MaxBodyBytes caps an import body (decisions §3); larger is a 413.
const MaxBodyBytes = 32 << 20

// Routes returns the people import route.
func Routes() []route.Route {
	return []route.Route{{
		Method:  http.MethodPost,
		Path:    Path,
		Summary: "Import people, with their users and managers, into the caller's organization: all rows or none.",
		Access:  route.Protected,
		Object:  Object,
		Need:    "Create",
		Handler: serveImport,
	}}
}

// serveImport decodes the rows, imports them in the caller's organization and answers 200
// with no content.
func serveImport(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st := engine.StoreFrom(ctx)
	if st == nil {
		return errors.New("people: no partition store in the request context")
	}
	p := auth.FromContext(ctx)
	if p == nil {
		return fmt.Errorf("people: import needs a caller: %w", auth.ErrUnauthenticated)
	}
	org, err := engine.ParseUUID(p.OrganizationIdentifier)
	if err != nil {
		return engine.Invalid("the caller acts in no organization to import people into")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
		return problem.New(http.StatusUnsupportedMediaType, "Content-Type %q is not JSON; send application/json.", ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		return fmt.Errorf("people: read body: %w", err)
	}
	rows, err := DecodeRows(body)
	if err != nil {
		return err
	}
	if err := Import(ctx, st, rows, org, p.UserIdentifier); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
