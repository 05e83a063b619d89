package people

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/deadline"
	"credo/handlers/observe"
	"credo/handlers/request"
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
	m := &model{}
	str := func(desc string) route.Schema { return route.String(desc).OrNull() }
	row := route.Schema{Type: "object", Description: "A PersonImportRow.", Properties: []route.Property{
		{Name: "Identifier", Schema: route.UUID("The new PersonIdentifier; required, and new.")},
		{Name: "Email", Schema: str("Required and well-formed; a user with this Email is reused when it belongs to the organization.")},
		{Name: "FirstName", Schema: str("Required.")},
		{Name: "LastName", Schema: str("Required.")},
		{Name: "BusinessTitle", Schema: str("")},
		{Name: "EmployeeType", Schema: str("Empty, Employee or Contractor.")},
		{Name: "Location", Schema: str("")},
		{Name: "Manager", Schema: str("Empty, or the Email of an existing user: recorded as the person's manager.")},
	}}
	return []route.Route{{
		Method:      http.MethodPost,
		Path:        Path,
		Tag:         "people",
		OperationID: "importPeople",
		Summary:     "Import people, with their users and managers, into the caller's organization: all rows or none.",
		Description: "Any bad row is a 400 listing the problems as \"<message> (<row index>)\" under the member's name, and nothing is written: the first 1,000 by row, its Detail counting every problem and row.",
		Access:      route.Protected,
		Object:      Object,
		Need:        "Create",
		Body: &route.Body{Required: true, Description: "The rows, at most 32 MiB.",
			Content: []route.Content{{MediaType: "application/json", Schema: route.ArrayOf(row)}}},
		Responses: []route.Response{{Status: http.StatusOK, Description: "Imported; no content."}},
		Errors: []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
			http.StatusServiceUnavailable},
		RefusesIdempotencyKey: keyRefusal,
		Needs:                 m.resolve,
		Handler:               m.serve,
	}}
}

// keyRefusal is why the import refuses Idempotency-Key rather than ignore it (a client that
// sends it believes its retry safe): the keeper would hold the body, up to 32 MiB, a second
// time in memory to fingerprint it, and the import needs no key to be retried, since an
// import is all or nothing and every row's Identifier must be new (decisions §11).
const keyRefusal = "An import needs no key to be retried: it is all or nothing, and every row's Identifier must be new, " +
	"so the retry of an import that was done is a 400 naming each Identifier as already a person's and creates no one twice, " +
	"and the retry of one that was refused or failed is done afresh."

// serve decodes the rows, imports them in the caller's organization and answers 200 with no
// content.
func (m *model) serve(w http.ResponseWriter, r *http.Request) error {
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
	// A body of up to 32 MiB may take longer than one ReadTimeout on a slow link: the one body
	// reader keeps moving the read deadline while it arrives at a steady rate (deadline.Body).
	body, err := request.Body(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	deadline.Extend(w, r)
	start := time.Now()
	rows, decoded, err := decodeRows(body)
	if err == nil {
		err = m.importRows(ctx, st, rows, decoded, org, p.UserIdentifier, p.Operator)
	}
	outcome := observe.ImportDone
	if errors.Is(err, engine.ErrInvalid) {
		outcome = observe.ImportRefused
	} else if err != nil {
		outcome = observe.ImportFailed
	}
	observe.Imported(ctx, outcome, len(rows), start)
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
