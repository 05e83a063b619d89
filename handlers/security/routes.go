package security

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/problem"
	"credo/handlers/request"
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
	settings := func(path, summary string, result route.Schema, fn problem.HandlerFunc) route.Route {
		return route.Route{Method: http.MethodGet, Path: "security/settings/" + path, Summary: summary, Tag: "security",
			Access: route.Protected, Object: SettingsObject, Need: "Read",
			Responses: ok(route.Content{MediaType: "application/json", Schema: result}),
			Errors:    []int{http.StatusServiceUnavailable}, Handler: fn}
	}
	routes := []route.Route{
		{Method: http.MethodPost, Path: "security/tokens/generate", Access: route.Public, Tag: "security", OperationID: "generateToken",
			Summary: "Generate an access token from a client secret, for Lifetime seconds (default 86400).",
			Description: "The secret is checked after the body (400), then refused when unknown, expired or revoked (401). " +
				"Organization, Agent and Subject are for operators only (403): act for an organization, or on behalf of a user.",
			Body: jsonBody(false, generateRequest{}, map[string]route.Schema{
				"Debug":        {Description: "Add readable user_debug and role_debug claims."},
				"Secret":       {Description: "The client secret."},
				"Lifetime":     {Description: "Seconds the token lives; default 86400.", Minimum: route.Int(auth.MinLifetime), Maximum: route.Int(auth.MaxLifetime)},
				"Organization": {Format: "uuid", Description: "Operators: the organization the token acts in."},
				"Agent":        {Format: "uuid", Description: "Operators: the user the token acts as, as its agent (not with Subject)."},
				"Subject":      {Format: "uuid", Description: "Operators: the user the token acts as (not with Agent)."},
			}),
			Responses: ok(jsonOf(tokenResponse{}, map[string]route.Schema{
				"TokenType": {Enum: []string{"Bearer"}},
				"ExpiresIn": {Description: "Seconds until the token expires."},
				"Lifetime":  {Description: `The lifetime in words, e.g. "3,600 seconds (~1 hour)".`},
			})),
			Errors:  []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests, http.StatusServiceUnavailable},
			Handler: h.generate},
		{Method: http.MethodGet, Path: "security/tokens/introspect", Access: route.Authenticated, Tag: "security", OperationID: "introspectToken",
			Summary: "Describe the caller's access token and the principal it authenticates.",
			Responses: ok(jsonOf(introspection{}, map[string]route.Schema{
				"Jwt": {Description: "The bearer token's claims; null when the caller authenticated with a session cookie."},
			})),
			Errors:  []int{http.StatusServiceUnavailable},
			Handler: h.introspect},
		{Method: http.MethodPost, Path: "security/tokens/validate", Access: route.Public, Tag: "security", OperationID: "validateToken",
			Summary: "Report the signature, expiry, audience and issuer checks of a token sent in the body or as the bearer token.",
			Body:    credentialBody("The token, as text or one JSON string; left out, the bearer token is read."),
			Responses: ok(jsonOf(auth.Report{}, map[string]route.Schema{
				"SignatureVerification": {Enum: []string{"Passed", "Failed"}},
				"AudienceVerification":  {Enum: []string{"Passed", "Failed"}},
				"IssuerVerification":    {Enum: []string{"Passed", "Failed"}},
				"ExpiryVerification":    {Description: `"Not Expired (N minutes remaining)" or "Expired".`},
			})),
			Errors:  []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge},
			Handler: h.validate},
		{Method: http.MethodDelete, Path: "security/tokens/{jti}", Access: route.Authenticated, Tag: "security", OperationID: "revokeToken",
			Summary: "Revoke one of the caller's access tokens or session cookies by identifier (operators: any); every process refuses it within 2 seconds.",
			Params: []route.Param{{Name: "jti", In: route.InPath,
				Description: "The token's jti claim (Jwt.Identifier of introspect) or the cookie's Identifier.", Schema: route.String("")}},
			Responses: []route.Response{{Status: http.StatusOK, Description: "Revoked; no content."}},
			Errors:    []int{http.StatusNotFound, http.StatusServiceUnavailable},
			Handler:   h.revoke},
		{Method: http.MethodPost, Path: "security/cookies/generate", Access: route.Authenticated, Tag: "security", OperationID: "generateCookie",
			Summary: "Issue a session cookie for the caller (Set-Cookie) and return its token.",
			Responses: []route.Response{{Status: http.StatusOK,
				Description: "The cookie; it expires with the credential that asked for it, at the latest after 24 hours.",
				Headers: []route.Header{{Name: "Set-Cookie", Required: true, Schema: route.String(""),
					Description: "The session cookie " + CookieName("{partition}") + " (the partition's slug in place of {partition}): HttpOnly, Secure, SameSite=Lax, Path=/, no Domain."}},
				Content: []route.Content{jsonOf(struct {
					Token string `json:"Token"`
				}{}, nil)}}},
			Errors:  []int{http.StatusTooManyRequests, http.StatusServiceUnavailable},
			Handler: h.generateCookie},
		{Method: http.MethodPost, Path: "security/cookies/decode", Access: route.Public, Tag: "security", OperationID: "decodeCookie",
			Summary: "Read a session cookie token sent in the body or as the session cookie.",
			Params: []route.Param{
				{Name: "decode", In: route.InQuery, Schema: route.Schema{Type: "boolean", Default: true},
					Description: "Answer the payload as a JSON object (true) or as its JSON text (false)."},
				{Name: "decrypt", In: route.InQuery, Schema: route.Schema{Type: "boolean", Default: false},
					Description: "Decrypt an encrypted cookie; without it an encrypted cookie is a 400."},
			},
			Body: credentialBody("The cookie token, as text or one JSON string; left out, the session cookie is read."),
			Responses: ok(route.Content{MediaType: "application/json", Schema: route.Schema{Type: "object", Properties: []route.Property{
				{Name: "Cookie", Required: true, Schema: route.Schema{OneOf: []route.Schema{
					{Go: cookieView{}}, route.String("The payload's JSON text (decode=false)."),
				}}},
			}}}),
			Errors:  []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge},
			Handler: h.decodeCookie},
		{Method: http.MethodPost, Path: "security/cookies/validate", Access: route.Public, Tag: "security", OperationID: "validateCookie",
			Summary: "Check a session cookie's signature and expiry.",
			Params: []route.Param{{Name: "decode", In: route.InQuery, Schema: route.Schema{Type: "boolean", Default: true},
				Description: "Include the payload as Cookie."}},
			Body: credentialBody("The cookie token, as text or one JSON string; left out, the session cookie is read."),
			Responses: ok(jsonOf(cookieReport{}, map[string]route.Schema{
				"Reason":                {Description: "Why the cookie is not valid."},
				"SignatureVerification": {Enum: []string{"Passed", "Failed"}},
				"ExpiryVerification":    {Description: `"Not Expired (N minutes remaining)", "Expired", or "Unknown" when the cookie cannot be read.`},
			})),
			Errors:  []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable},
			Handler: h.validateCookie},
		settings("endpoints", "List every v2 operation with its method, path, summary and the permission it needs.",
			route.ArrayOf(route.Schema{Go: endpointDescription{}, Members: map[string]route.Schema{
				"Access": {Enum: []string{"Public", "Authenticated", "Protected"}}}}),
			h.settingsEndpoints),
		settings("permissions", "List the permission flags and their PermissionMask bits.",
			route.ArrayOf(route.Schema{Type: "object", Properties: []route.Property{
				{Name: "Flag", Required: true, Schema: route.String("")},
				{Name: "Bit", Required: true, Schema: route.Integer("The flag's bit in PermissionMask; 0 for TrialAccess.")},
			}}),
			h.settingsPermissions),
		settings("resources", "List the permission objects (resource groups and commands) with their identifiers and operations.",
			route.ArrayOf(route.Schema{Go: resourceDescription{}, Members: map[string]route.Schema{
				"Identifier": {Format: "uuid"}}}),
			h.settingsResources),
		settings("roles", "List the roles (group slugs) that memberships hold.", route.ArrayOf(route.String("")), h.settingsRoles),
	}
	for i := range routes {
		routes[i].Handler = noStore(routes[i].Handler)
	}
	return routes
}

// noStore marks a security operation's responses `Cache-Control: no-store`: they carry
// tokens, cookies, claims or the permission model, which no cache may keep.
func noStore(h problem.HandlerFunc) problem.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Cache-Control", "no-store")
		return h(w, r)
	}
}

// introspection is the answer of tokens/introspect.
type introspection struct {
	Jwt       *jwtDescription      `json:"Jwt"`
	Principal principalDescription `json:"Principal"`
}

// ok is a 200 answer with a body.
func ok(c ...route.Content) []route.Response {
	return []route.Response{{Status: http.StatusOK, Description: "Success.", Content: c}}
}

// jsonOf is a JSON body of v's shape, with members described.
func jsonOf(v any, members map[string]route.Schema) route.Content {
	return route.Content{MediaType: "application/json", Schema: route.Schema{Go: v, Members: members}}
}

// jsonBody is a JSON request body of v's shape; an empty body is an empty object.
func jsonBody(required bool, v any, members map[string]route.Schema) *route.Body {
	return &route.Body{Required: required, Content: []route.Content{jsonOf(v, members)}}
}

// credentialBody is a token or cookie sent as text or as one JSON string.
func credentialBody(desc string) *route.Body {
	return &route.Body{Description: desc, Content: []route.Content{
		{MediaType: "application/json", Schema: route.String("One JSON string.")},
		{MediaType: "*/*", Schema: route.Schema{Type: "string", Format: "binary", Description: "The text, of any or no Content-Type."}},
	}}
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

// readBody reads a request body of any type (a token or cookie is sent as text) of at most
// MaxBodyBytes, through the one body reader.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return request.Read(w, r, MaxBodyBytes)
}

// decodeStrict decodes a JSON object body into v, refusing members whose exact names are not
// in names, values of the wrong type and whatever engine.DecodeObject refuses (trailing data,
// a repeated member, invalid UTF-8, U+0000). Every member problem is reported: the error is
// one *engine.ValidationError naming each member at fault (a single problem reads as it
// always did), and the members without one are set in v. An empty body is an empty object.
func decodeStrict(body []byte, v any, names ...string) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	raw, verr, err := engine.DecodeObjectApart(body)
	if err != nil {
		var notObject *engine.ValidationError
		if errors.As(err, &notObject) && len(notObject.Fields) == 0 {
			return problem.New(http.StatusBadRequest, "The body must be a JSON object with the members %s: %s", strings.Join(names, ", "), notObject.Detail)
		}
		return err
	}
	given := make([]string, 0, len(raw))
	for name := range raw {
		given = append(given, name)
	}
	sort.Strings(given)
	for _, name := range given {
		switch {
		case verr.Fields[engine.ShownName(name)] != nil:
			continue // its text is the problem reported
		case !slices.Contains(names, name):
			verr.Add(engine.ShownName(name), fmt.Sprintf("%s is not a member; the members are %s", engine.ShownName(name), strings.Join(names, ", ")))
			continue
		}
		one, err := json.Marshal(map[string]json.RawMessage{name: raw[name]})
		if err == nil {
			err = json.Unmarshal(one, v)
		}
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr):
			verr.Add(name, fmt.Sprintf("%s must be a JSON %s", name, jsonKind(typeErr.Type.Kind().String())))
		case err != nil:
			verr.Add(name, fmt.Sprintf("%s is not valid: %v", name, err))
		}
	}
	if !verr.Empty() {
		return verr
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
	q, err := request.Query(r)
	if err != nil {
		return nil, err
	}
	for name, vals := range q {
		if _, ok := defaults[name]; !ok {
			allowed := make([]string, 0, len(defaults))
			for k := range defaults {
				allowed = append(allowed, k)
			}
			sort.Strings(allowed)
			shown := engine.ShownName(name)
			return nil, badMember(shown, "unknown parameter %s; the parameters are %s", shown, strings.Join(allowed, ", "))
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
			return nil, badMember(name, "%s %s is not a boolean (true or false)", name, engine.Quoted(vals[0]))
		}
	}
	return out, nil
}

// textBody returns a credential sent as the body: plain text, or a JSON string.
func textBody(body []byte) (string, error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '"' {
		var s string
		if err := engine.CheckJSON(body, ""); err != nil {
			return "", err
		}
		if err := json.Unmarshal(body, &s); err != nil {
			return "", problem.New(http.StatusBadRequest, "The body must be the text, or one JSON string: %v", err)
		}
		return strings.TrimSpace(s), nil
	}
	return string(body), nil
}
