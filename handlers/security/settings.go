package security

import (
	"net/http"
	"sort"
	"strings"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/problem"
	"credo/handlers/request"
	"credo/handlers/route"
)

// accessNames are the names of the route access levels in security/settings/endpoints.
var accessNames = map[route.Access]string{
	route.Public: "Public", route.Authenticated: "Authenticated", route.Protected: "Protected",
}

// endpointDescription is one item of security/settings/endpoints.
type endpointDescription struct {
	Method  string `json:"Method"`
	Path    string `json:"Path"`
	Summary string `json:"Summary"`
	// Access is Public (no credential), Authenticated (any credential) or Protected (a
	// credential and Permission).
	Access     string          `json:"Access"`
	Permission *permissionNeed `json:"Permission"`
}

// permissionNeed is the permission a protected operation needs.
type permissionNeed struct {
	Object           string `json:"Object"`
	ObjectIdentifier string `json:"ObjectIdentifier"`
	Flag             string `json:"Flag"`
}

// describe turns a routed operation into its description; item paths name their key members,
// as the router's variables do. A version-1 operation's path is from the root already.
func describe(ep handlers.Endpoint) endpointDescription {
	path := ep.Path
	if !version1(ep) {
		path = "/v2/{partition}/" + path
	}
	d := endpointDescription{Method: ep.Method, Path: path, Summary: ep.Summary, Access: accessNames[ep.Access]}
	if ep.Access == route.Protected {
		d.Permission = &permissionNeed{Object: ep.Object, ObjectIdentifier: auth.ObjectID(ep.Object).String(), Flag: ep.Need}
	}
	return d
}

// version1 tells whether an endpoint is a version-1 (mounted) operation: its path is from the
// root.
func version1(ep handlers.Endpoint) bool { return strings.HasPrefix(ep.Path, "/") }

// settingsEndpoints serves security/settings/endpoints: every routed v2 operation.
func (h *handler) settingsEndpoints(w http.ResponseWriter, r *http.Request) error {
	eps := h.endpoints()
	out := make([]endpointDescription, 0, len(eps))
	for _, ep := range eps {
		out = append(out, describe(ep))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return problem.JSON(w, http.StatusOK, out)
}

// settingsPermissions serves security/settings/permissions: the flags and their bits.
func (h *handler) settingsPermissions(w http.ResponseWriter, r *http.Request) error {
	type flag struct {
		Flag string `json:"Flag"`
		Bit  int64  `json:"Bit"`
	}
	var out []flag
	for _, f := range auth.Flags() {
		out = append(out, flag{Flag: string(f), Bit: f.Bit()})
	}
	return problem.JSON(w, http.StatusOK, out)
}

// resourceDescription is one permission object of security/settings/resources.
type resourceDescription struct {
	Name string `json:"Name"`
	// Record is the record name of a resource group; null for the other objects.
	Record *string `json:"Record"`
	// ObjectType is Resource for a record group, Command for a v2 plugin or command, and
	// Version1 for an object of the version-1 API (api/events, api/registrations).
	ObjectType string `json:"ObjectType"`
	Identifier string `json:"Identifier"`
	Operations []op   `json:"Operations"`
}

type op struct {
	Method string `json:"Method"`
	Path   string `json:"Path"`
	Flag   string `json:"Flag"`
}

// settingsResources serves security/settings/resources: every object a protected operation
// names, version 1's included, resource groups (ObjectType Resource) first, then the others by
// name, each with its ObjectIdentifier and operations.
func (h *handler) settingsResources(w http.ResponseWriter, r *http.Request) error {
	byName := map[string]*resourceDescription{}
	var names []string
	for _, ep := range h.endpoints() {
		if ep.Access != route.Protected {
			continue
		}
		d, ok := byName[ep.Object]
		if !ok {
			d = &resourceDescription{Name: ep.Object, ObjectType: "Command", Identifier: auth.ObjectID(ep.Object).String()}
			if version1(ep) {
				d.ObjectType = "Version1"
			} else if name, ok := h.s.groupPaths[ep.Object]; ok {
				d.Record, d.ObjectType = &name, "Resource"
			}
			byName[ep.Object] = d
			names = append(names, ep.Object)
		}
		desc := describe(ep)
		d.Operations = append(d.Operations, op{Method: ep.Method, Path: desc.Path, Flag: ep.Need})
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := byName[names[i]], byName[names[j]]
		if ra, rb := a.ObjectType == "Resource", b.ObjectType == "Resource"; ra != rb {
			return ra
		}
		return a.Name < b.Name
	})
	out := make([]*resourceDescription, 0, len(names))
	for _, n := range names {
		out = append(out, byName[n])
	}
	return problem.JSON(w, http.StatusOK, out)
}

// settingsRoles serves security/settings/roles: the sorted, distinct GroupSlug of the groups
// that memberships hold (in the caller's organization, unless it is an operator).
func (h *handler) settingsRoles(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, _, err := h.partition(r)
	if err != nil {
		return err
	}
	groups := h.s.rec.group
	recs, err := all(ctx, st, groups, []string{"GroupIdentifier", "GroupSlug"})
	if err != nil {
		return err
	}
	slugs := map[string]string{}
	for _, g := range recs {
		if s := str(groups, g, "GroupSlug"); s != "" {
			slugs[str(groups, g, "GroupIdentifier")] = s
		}
	}
	ms := h.s.rec.membership
	q, err := eq(ms, []string{"GroupIdentifier"})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	roles := []string{}
	err = st.Stream(ctx, ms, q, request.Scope(ctx), func(m engine.Record) error {
		if s, ok := slugs[str(ms, m, "GroupIdentifier")]; ok && !seen[s] {
			seen[s] = true
			roles = append(roles, s)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(roles)
	return problem.JSON(w, http.StatusOK, roles)
}
