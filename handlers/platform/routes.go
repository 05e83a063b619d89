package platform

import (
	"errors"
	"fmt"
	"net/http"

	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/route"
)

// Config is what the platform operations report about the running service.
type Config struct {
	// Version is the build's version string, e.g. "v25.2.3-4-gabc1234" from git describe; see
	// ParseVersion. Empty is reported as "dev".
	Version string
	// Environments maps a partition slug to its display name, reported by health as
	// Environment.Name; a partition missing from the map is named by its slug.
	Environments map[string]string
}

// Routes returns the platform operations. health, version and formats/time are public
// (decisions §7); routes/settings needs Read on platform/actions, because it reads those records.
func Routes(cfg Config) []route.Route {
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	return []route.Route{
		{Method: http.MethodGet, Path: "platform/health", Access: route.Public,
			Summary: "Report whether the service and the partition's database answer (503 when the database does not).",
			Handler: cfg.health},
		{Method: http.MethodGet, Path: "platform/version", Access: route.Public,
			Summary: "Report the running build's version and its numeric parts.",
			Handler: cfg.version},
		{Method: http.MethodGet, Path: "platform/formats/time", Access: route.Public,
			Summary: "Reformat the date/time in query parameter value in the platform's display formats.",
			Handler: formatTime},
		{Method: http.MethodGet, Path: "platform/routes/settings", Access: route.Protected,
			Object: "platform/actions", Need: "Read",
			Summary: "Describe the page of the platform action whose ActionUrl is query parameter url: title, breadcrumbs and help.",
			Handler: routeSettings},
	}
}

// formatTime serves formats/time: the one query parameter `value` through FormatTime.
func formatTime(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for name := range q {
		if name != "value" {
			return badParam(name, "unknown parameter %s; the only parameter is value", name)
		}
	}
	vals := q["value"]
	switch len(vals) {
	case 0:
		return badParam("value", "value is required: %v", ErrBadTime)
	case 1:
	default:
		return badParam("value", "value is given %d times; give it once", len(vals))
	}
	out, err := FormatTime(vals[0])
	if errors.Is(err, ErrBadTime) {
		return badParam("value", "value %v", err)
	}
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, out)
}

// badParam is a 400 problem naming one query parameter in Errors.
func badParam(name, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	p := problem.New(http.StatusBadRequest, "%s", msg)
	p.Errors = map[string][]string{name: {msg}}
	return p
}

// storeOf returns the request's partition store; the router always sets it, so its absence is a bug.
func storeOf(r *http.Request) (*engine.Store, error) {
	s := engine.StoreFrom(r.Context())
	if s == nil {
		return nil, fmt.Errorf("platform: %s: no partition store in the request context", r.URL.Path)
	}
	return s, nil
}
