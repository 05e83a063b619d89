package handlers

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"credo/engine"
	"credo/handlers/observe"
	"credo/handlers/problem"
)

// ProbeTimeout bounds the readiness check of each partition, so that a probe gets its 503 well
// within a prober's own timeout when a database hangs.
const ProbeTimeout = 2 * time.Second

// Readiness is the body of /readyz, the same shape for 200 and 503.
type Readiness struct {
	// Status is "Ready" (every partition checked is ready), "Degraded" (some are, some are
	// not: 200, the process serves the ready ones), "NotReady" (none is) or "Draining" (the
	// process is shutting down).
	Status string `json:"Status"`
	// Partitions gives the state of each partition checked — every configured one, or the one
	// that ?partition= names: "ok", "unreachable" (its database does not answer) or "not
	// migrated" (a table or column that the descriptors need is missing: never migrated, or
	// dropped or renamed since); empty while draining, which checks none. The causes are
	// logged, not shown to anonymous callers.
	Partitions map[string]string `json:"Partitions"`
}

// The states of Readiness.
const (
	StatusReady    = "Ready"
	StatusDegraded = "Degraded"
	StatusNotReady = "NotReady"
	StatusDraining = "Draining"
)

// The probes' paths. They are operational endpoints, not API operations: the OpenAPI document
// leaves them out.
const (
	LivezPath  = "/livez"
	ReadyzPath = "/readyz"
)

// probes mounts /livez and /readyz on the root router: outside /v2/{partition}, without
// authentication, for a process supervisor and a load balancer.
func (s *Server) probes(root *mux.Router) {
	root.HandleFunc(LivezPath, livez).Methods(http.MethodGet, http.MethodHead)
	root.Handle(ReadyzPath, problem.HandlerFunc(s.readyz)).Methods(http.MethodGet, http.MethodHead)
	for _, p := range []string{LivezPath, ReadyzPath} {
		root.Handle(p, methodNotAllowed([]string{http.MethodGet, http.MethodHead}))
		s.Observer.Route(p).Probe = true
	}
}

// Drain makes /readyz answer 503 from now on, so that load balancers stop sending requests
// before the server stops accepting them (the first step of shutdown).
func (s *Server) Drain() { s.draining.Store(true) }

// livez answers 200 as long as the process serves HTTP at all.
func livez(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz checks the partitions at once, each on its own database. Without a query it checks
// every configured partition and answers 200 while at least one is ready — "Ready" when all
// are, "Degraded" when some are not — and 503 "NotReady" when none is: partitions on several
// databases fail apart, and a process that can serve some of them stays in its load balancer's
// rotation (requests to a failing partition are answered 503 by the API itself). With
// ?partition=P it checks that partition alone, 200 or 503, for a balancer that routes
// /v2/P/… by it. While the process drains, every answer is 503 "Draining" at once, naming no
// partition state (none is checked). An unknown partition is 404, any other query parameter 400.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	parts, err := s.probed(r)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	if s.draining.Load() {
		// At once, without checking the partitions: a check waits up to ProbeTimeout for a
		// database that hangs, and the load balancer must see the 503 within its own timeout
		// while --shutdown-delay runs.
		return problem.JSON(w, http.StatusServiceUnavailable, Readiness{Status: StatusDraining, Partitions: map[string]string{}})
	}
	out := Readiness{Partitions: make(map[string]string, len(parts))}
	states := make([]string, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() { states[i] = s.ready(r, p) })
	}
	wg.Wait()
	if r.Context().Err() != nil {
		return r.Context().Err() // the prober left
	}
	ok := 0
	for i, p := range parts {
		out.Partitions[p] = states[i]
		if states[i] == "ok" {
			ok++
		}
	}
	status := http.StatusOK
	switch {
	case ok == len(parts):
		out.Status = StatusReady
	case ok > 0:
		out.Status = StatusDegraded
	default:
		out.Status, status = StatusNotReady, http.StatusServiceUnavailable
	}
	return problem.JSON(w, status, out)
}

// probed returns the partitions a readiness probe asks about: ?partition=P, or every one.
func (s *Server) probed(r *http.Request) ([]string, error) {
	q := r.URL.Query()
	for name := range q {
		if name != "partition" {
			return nil, problem.New(http.StatusBadRequest, "/readyz takes one query parameter, partition; %s is not it.", engine.Quoted(name))
		}
	}
	vs, asked := q["partition"]
	if !asked {
		return s.Database.Partitions(), nil
	}
	if len(vs) != 1 || vs[0] == "" {
		return nil, problem.New(http.StatusBadRequest, "partition must name one partition.")
	}
	if _, ok := s.Database.Store(vs[0]); !ok {
		return nil, problem.New(http.StatusNotFound, "The partition %s does not exist.", engine.Quoted(vs[0]))
	}
	return vs, nil
}

// ready checks one partition; a failure is logged as part of the partition's outage.
func (s *Server) ready(r *http.Request, partition string) string {
	store, _ := s.Database.Store(partition)
	ctx, cancel := context.WithTimeout(r.Context(), ProbeTimeout)
	defer cancel()
	err := store.Ready(ctx)
	switch {
	case err == nil:
		observe.Available(r, partition)
		return "ok"
	case errors.Is(err, engine.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		observe.Unavailable(r, partition, err)
		return "unreachable"
	}
	observe.NotMigrated(r, partition, err)
	return "not migrated"
}
