package platform

import (
	"errors"
	"fmt"
	"net/http"

	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/request"
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
	settings := &settings{}
	health := route.JSON(Health{})
	health[0].Schema.Name = "Health" // the body of the 200 and the 503
	health[0].Schema.Members = map[string]route.Schema{
		"Status":   {Enum: []string{"Healthy", "Unhealthy"}},
		"Database": {Enum: []string{"ok", "unreachable"}},
	}
	return []route.Route{
		{Method: http.MethodGet, Path: "platform/health", Access: route.Public, Probe: true, Tag: "platform", OperationID: "getHealth",
			Summary: "Report whether the service and the partition's database answer (503 when the database does not).",
			Responses: []route.Response{
				{Status: http.StatusOK, Description: "The service and its database answer.", Content: health},
				{Status: http.StatusServiceUnavailable, Description: "The partition's database does not answer; the body has the same shape.", Content: health},
			},
			Handler: cfg.health},
		{Method: http.MethodGet, Path: "platform/version", Access: route.Public, Tag: "platform", OperationID: "getVersion",
			Summary: "Report the running build's version and its numeric parts.",
			Responses: []route.Response{{Status: http.StatusOK, Description: "The version string as built, and its Major, Minor, Build and Revision numbers (0 when absent).",
				Content: route.JSON(Version{})}},
			Handler: cfg.version},
		{Method: http.MethodGet, Path: "platform/formats/time", Access: route.Public, Tag: "platform", OperationID: "formatTime",
			Summary: "Reformat the date/time in query parameter value in the platform's display formats.",
			Params: []route.Param{{Name: "value", In: route.InQuery, Required: true,
				Description: "The date/time to reformat, in the send format (an offset is required).",
				Schema:      route.Schema{Type: "string", Format: "date-time", Example: "2024-03-10T14:30:00-05:00"}}},
			Responses: []route.Response{{Status: http.StatusOK, Description: "The input, reformatted (en-US culture) and converted to three US zones.",
				Content: route.JSON(TimeFormats{})}},
			Errors:  []int{http.StatusBadRequest},
			Handler: formatTime},
		{Method: http.MethodGet, Path: "platform/routes/settings", Access: route.Protected, Tag: "platform", OperationID: "getRouteSettings",
			Object: "platform/actions", Need: "Read",
			Summary: "Describe the page of the platform action whose ActionUrl is query parameter url: title, breadcrumbs and help.",
			Params: []route.Param{{Name: "url", In: route.InQuery,
				Description: "The page's url; a leading / is ignored. Left out: the home page (\"\").",
				Schema:      route.String("")}},
			Responses: []route.Response{{Status: http.StatusOK,
				Description: "The page's settings; an unknown url or a page the caller may not see is a 200 whose Errors says so (Code 404 or 403).",
				Content:     route.JSON(RouteSettings{})}},
			Errors:  []int{http.StatusBadRequest, http.StatusServiceUnavailable},
			Needs:   settings.resolve,
			Handler: settings.serve},
	}
}

// formatTime serves formats/time: the one query parameter `value` through FormatTime.
func formatTime(w http.ResponseWriter, r *http.Request) error {
	q, err := request.Query(r)
	if err != nil {
		return err
	}
	for name := range q {
		if name != "value" {
			shown := engine.ShownName(name)
			return badParam(shown, "unknown parameter %s; the only parameter is value", shown)
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
