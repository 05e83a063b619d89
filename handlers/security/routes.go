package security

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"

	"credo/engine"
	"credo/handlers"
	"credo/handlers/problem"
	"credo/handlers/route"
)

// MaxBodyBytes caps the bodies of the security operations (a token request, a token or a
// cookie); larger is a 413.
const MaxBodyBytes = 64 << 10

// SettingsObject is the permission object of the security/settings operations: they describe
// permissions, so reading them needs Read on the permissions group.
const SettingsObject = "security/permissions"

// Routes returns the security operations. endpoints lists every routed operation for
// security/settings/endpoints and resources; pass the server's Endpoints method, which is
// called per request so that it sees every module.
func (s *Security) Routes(endpoints func() []handlers.Endpoint) []route.Route {
	h := &handler{s: s, endpoints: endpoints}
	settings := func(path, summary string, fn problem.HandlerFunc) route.Route {
		return route.Route{Method: http.MethodGet, Path: "security/settings/" + path, Summary: summary,
			Access: route.Protected, Object: SettingsObject, Need: "Read", Handler: fn}
	}
	return []route.Route{
		{Method: http.MethodPost, Path: "security/tokens/generate", Access: route.Public,
			Summary: "Generate an access token from a client secret, for Lifetime seconds (default 86400).",
			Handler: h.generate},
		{Method: http.MethodGet, Path: "security/tokens/introspect", Access: route.Authenticated,
			Summary: "Describe the caller's access token and the principal it authenticates.",
			Handler: h.introspect},
		{Method: http.MethodPost, Path: "security/tokens/validate", Access: route.Public,
			Summary: "Report the signature, expiry, audience and issuer checks of a token sent in the body or as the bearer token.",
			Handler: h.validate},
		{Method: http.MethodDelete, Path: "security/tokens/{jti}", Access: route.Authenticated,
			Summary: "Revoke one of the caller's access tokens or session cookies by identifier (operators: any); every process refuses it within 2 seconds.",
			Handler: h.revoke},
		{Method: http.MethodPost, Path: "security/cookies/generate", Access: route.Authenticated,
			Summary: "Issue a session cookie for the caller (Set-Cookie) and return its token.",
			Handler: h.generateCookie},
		{Method: http.MethodPost, Path: "security/cookies/decode", Access: route.Public,
			Summary: "Read a session cookie token sent in the body or as the session cookie.",
			Handler: h.decodeCookie},
		{Method: http.MethodPost, Path: "security/cookies/validate", Access: route.Public,
			Summary: "Check a session cookie's signature and expiry.",
			Handler: h.validateCookie},
		settings("endpoints", "List every v2 operation with its method, path, summary and the permission it needs.", h.settingsEndpoints),
		settings("permissions", "List the permission flags and their PermissionMask bits.", h.settingsPermissions),
		settings("resources", "List the permission objects (resource groups and commands) with their identifiers and operations.", h.settingsResources),
		settings("roles", "List the roles (group slugs) that memberships hold.", h.settingsRoles),
	}
}

// handler serves the security operations.
type handler struct {
	s         *Security
	endpoints func() []handlers.Endpoint
}

// partition returns the request's store and the partition's verifiers.
func (h *handler) partition(r *http.Request) (*engine.Store, *partitionAuth, error) {
	st := engine.StoreFrom(r.Context())
	if st == nil {
		return nil, nil, fmt.Errorf("security: %s: no partition store in the request context", r.URL.Path)
	}
	pa, err := h.s.partition(st.Partition)
	return st, pa, err
}

// readBody reads a request body of at most MaxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("security: read body: %w", err)
	}
	return b, nil
}

// decodeStrict decodes a JSON object body into v, refusing members whose exact names are not
// in names, values of the wrong type and trailing data, each as a 400 naming the member. An
// empty body is an empty object.
func decodeStrict(body []byte, v any, names ...string) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return problem.New(http.StatusBadRequest, "The body must be a JSON object with the members %s.", strings.Join(names, ", "))
	}
	if dec.More() {
		return problem.New(http.StatusBadRequest, "The body must hold one JSON object.")
	}
	var unknown []string
	for name := range raw {
		if !slices.Contains(names, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return badMember(unknown[0], "%s is not a member; the members are %s", unknown[0], strings.Join(names, ", "))
	}
	if err := json.Unmarshal(body, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return badMember(typeErr.Field, "%s must be a JSON %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()))
		}
		return problem.New(http.StatusBadRequest, "The body is not valid: %v", err)
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64":
		return "integer"
	case "bool":
		return "boolean"
	case "ptr":
		return "value of the member's type"
	}
	return goKind
}

// boolParams reads optional boolean query parameters with defaults; any other parameter, a
// repeated one or a value that is not true, false, 1 or 0 is a 400 naming it.
func boolParams(r *http.Request, defaults map[string]bool) (map[string]bool, error) {
	out := map[string]bool{}
	for k, v := range defaults {
		out[k] = v
	}
	for name, vals := range r.URL.Query() {
		if _, ok := defaults[name]; !ok {
			allowed := make([]string, 0, len(defaults))
			for k := range defaults {
				allowed = append(allowed, k)
			}
			sort.Strings(allowed)
			return nil, badMember(name, "unknown parameter %s; the parameters are %s", name, strings.Join(allowed, ", "))
		}
		if len(vals) != 1 {
			return nil, badMember(name, "%s is given %d times; give it once", name, len(vals))
		}
		switch strings.ToLower(vals[0]) {
		case "true", "1":
			out[name] = true
		case "false", "0":
			out[name] = false
		default:
			return nil, badMember(name, "%s %q is not a boolean (true or false)", name, vals[0])
		}
	}
	return out, nil
}

// textBody returns a credential sent as the body: plain text, or a JSON string.
func textBody(body []byte) (string, error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '"' {
		var s string
		if err := json.Unmarshal(body, &s); err != nil {
			return "", problem.New(http.StatusBadRequest, "The body must be the text, or one JSON string: %v", err)
		}
		return strings.TrimSpace(s), nil
	}
	return string(body), nil
}
