package compliance

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"credo/engine"
	"credo/handlers/deadline"
	"credo/handlers/observe"
	"credo/handlers/request"
	"credo/handlers/route"
)

// Path is the route of the compliance-summaries command, relative to /v2/{partition}/; it is
// also its permission object.
const Path = "api/plugin/cmds/compliance-summaries"

// Routes returns the compliance plugin's routes for the v2 router.
func Routes() []route.Route {
	uuids := route.ArrayOf(route.UUID("")).OrNull()
	uuids.MaxItems = route.Int(MaxListItems)
	keys := route.ArrayOf(route.Schema{Type: "integer", Minimum: route.Int(MinMeasurementKey), Maximum: route.Int(MaxMeasurementKey)}).OrNull()
	keys.MaxItems = route.Int(MaxListItems)
	s := &summaries{}
	return []route.Route{{
		Method:      http.MethodPost,
		Path:        Path,
		Tag:         "compliance",
		OperationID: "complianceSummaries",
		Summary:     "Compliance status counts and scores per department, learner and measurement.",
		Description: "Rows of the caller's organization, ordered by learner name, then measurement key.",
		Access:      route.Protected,
		Object:      Path,
		Need:        "Execute",
		Body: &route.Body{Description: "The conditions; every member is optional, and an empty body asks for everything.",
			Content: []route.Content{{MediaType: "application/json", Schema: route.Schema{Type: "object", Properties: []route.Property{
				{Name: "Departments", Schema: describe(uuids, "Group identifiers of the departments; empty or null: all.")},
				{Name: "Learners", Schema: describe(uuids, "User identifiers of the learners; empty or null: all.")},
				{Name: "Measurements", Schema: describe(keys, "Measurement keys 1 to 18; empty or null: all.")},
				{Name: "ProfileCondition", Schema: route.Schema{Type: "integer", Minimum: route.Int(1), Maximum: route.Int(3), Default: 3,
					Description: "1: the primary profile, 2: mandatory profiles, 3: all profiles."}},
				{Name: "LearnerMustHaveProfile", Schema: route.Bool("Keep only learners with some Required above 0.")},
				{Name: "DepartmentEmployment", Schema: route.Bool("Keep learners with a Department membership in the department.").OrNull()},
				{Name: "OrganizationEmployment", Schema: route.Bool("Keep learners with an Organization membership in the department.").OrNull()},
				{Name: "DataAccess", Schema: route.Bool("Keep learners with an Administration membership in the department. When all three are false or null, no employment filter applies.").OrNull()},
			}}}}},
		Responses: []route.Response{{Status: http.StatusOK, Description: "The summaries.",
			Content: route.JSON([]Summary{})}},
		Errors:  []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable},
		Needs:   s.resolve,
		Handler: s.serve,
	}}
}

func describe(s route.Schema, description string) route.Schema {
	s.Description = description
	return s
}

// serve decodes the body, runs the one query within the caller's organization and streams
// the JSON array. Nothing is written before the first row is read, so a failing query is
// still a problem document.
func (s *summaries) serve(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st := engine.StoreFrom(ctx)
	if st == nil {
		return errors.New("compliance: no partition store in the request context")
	}
	body, err := request.Body(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	q, err := DecodeRequest(body)
	if err != nil {
		return err
	}
	out := &arrayWriter{w: w, r: r}
	err = s.run(ctx, st, q, request.Scope(ctx), out.write)
	if err != nil && out.started {
		// The status line is gone: break the response rather than end a truncated array.
		observe.Fail(r, http.StatusInternalServerError, fmt.Errorf("compliance summaries failed mid-response: %w", err))
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
	r       *http.Request
	buf     *bufio.Writer
	started bool // bytes have reached w
}

func (a *arrayWriter) begin() {
	a.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	a.buf = bufio.NewWriterSize(startWriter{a, deadline.Writer(a.w, a.r, a.w)}, 32<<10)
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

// startWriter records that the response has started before passing bytes on to body, which
// moves the write deadline as the array streams.
type startWriter struct {
	a    *arrayWriter
	body io.Writer
}

func (s startWriter) Write(p []byte) (int, error) {
	s.a.started = true
	return s.body.Write(p)
}
