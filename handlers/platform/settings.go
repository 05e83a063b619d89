package platform

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"credo/auth"
	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// MaxActionDepth caps how many actions routes/settings walks up a parent chain (navigation
// parents for the breadcrumbs, permission parents for the requirement), the action itself
// included. Each step up is one get by key, so a request makes at most 2 + 2×(MaxActionDepth−1)
// queries: two url lookups, then the two chains.
const MaxActionDepth = 16

// OperatorRequirement is the AuthorizationRequirement that only operators meet.
const OperatorRequirement = "Operator"

// RouteSettings is the result of routes/settings (api.md RouteSettings). When Errors is not
// empty the page is not shown: ActionId and PageId are null, CoreAbout and CustomAbout are null,
// Breadcrumbs is empty, ActionTitle is "" and the flags are false.
type RouteSettings struct {
	ActionID *string `json:"ActionId"`
	// PageID equals ActionID: an action is the page it opens, and no separate page record exists.
	PageID *string `json:"PageId"`
	// CoreAbout is the platform's own help for the page: Heading is the ActionTitle, Body the
	// action's HelpUrl ("" when none).
	CoreAbout *About `json:"CoreAbout"`
	// CustomAbout is help a tenant writes for the page; no record holds it yet, so it is empty.
	CustomAbout *About       `json:"CustomAbout"`
	Breadcrumbs []Breadcrumb `json:"Breadcrumbs"`
	// DisplayCalendar and FullWidth are layout hints that no action field carries; they are false.
	DisplayCalendar bool `json:"DisplayCalendar"`
	// ActionTitle is ActionName, else ActionNameShort, else the url.
	ActionTitle string       `json:"ActionTitle"`
	FullWidth   bool         `json:"FullWidth"`
	Errors      []RouteError `json:"Errors"`
}

// About is a heading and a body of help text.
type About struct {
	Heading string `json:"Heading"`
	Body    string `json:"Body"`
}

// Breadcrumb is one step of the navigation path to a page: Text is ActionNameShort, else
// ActionName; Url is "/" followed by ActionUrl without its leading "/", or "" when the action has
// no url (a menu heading).
type Breadcrumb struct {
	Text string `json:"Text"`
	URL  string `json:"Url"`
}

// RouteError is one reason the page cannot be shown: Code 404 (no action has the url) or 403
// (the caller does not meet the action's requirement). Data carries "Url", the url as asked.
type RouteError struct {
	Code        int               `json:"Code"`
	Summary     string            `json:"Summary"`
	Description string            `json:"Description"`
	Data        map[string]string `json:"Data"`
}

// serve serves routes/settings. The url is matched against ActionUrl with leading "/"
// ignored on both sides, exactly otherwise (case-sensitive; a missing url is the home page, ""):
// an action stored as "/x" or "x" answers "x", "/x" and "//x". When several actions share a url,
// the one with the smallest ActionIdentifier wins.
//
// The caller may see the page when it is an operator, or when the action's requirement is empty,
// or is OperatorRequirement and the caller is an operator, or otherwise names one of the
// caller's roles (compared as slugs: "Learning Administrators" matches role
// "learning-administrators"). An action with an empty requirement inherits the first non-empty
// one up its permission-parent chain.
func (s *settings) serve(w http.ResponseWriter, r *http.Request) error {
	store, err := storeOf(r)
	if err != nil {
		return err
	}
	q, err := request.Query(r)
	if err != nil {
		return err
	}
	for name, vals := range q {
		if name != "url" {
			shown := engine.ShownName(name)
			return badParam(shown, "unknown parameter %s; the only parameter is url", shown)
		}
		if len(vals) > 1 {
			return badParam(name, "url is given %d times; give it once", len(vals))
		}
	}
	asked := q.Get("url")
	a := s.in(store)
	ctx := r.Context()
	rec, err := a.byURL(ctx, strings.TrimLeft(asked, "/"))
	if err != nil {
		return err
	}
	if rec == nil {
		return problem.JSON(w, http.StatusOK, failed(RouteError{Code: http.StatusNotFound,
			Summary:     "Url Not Found: " + asked,
			Description: fmt.Sprintf("No platform action has the url %q.", asked),
			Data:        map[string]string{"Url": asked}}))
	}
	req, err := a.requirement(ctx, rec)
	if err != nil {
		return err
	}
	if !meets(auth.FromContext(ctx), req) {
		return problem.JSON(w, http.StatusOK, failed(RouteError{Code: http.StatusForbidden,
			Summary:     "Access Denied: " + asked,
			Description: fmt.Sprintf("The page at %q requires %s, which you do not have.", asked, req),
			Data:        map[string]string{"Url": asked, "Requirement": req}}))
	}
	crumbs, err := a.breadcrumbs(ctx, rec)
	if err != nil {
		return err
	}
	id := a.str(rec, "ActionIdentifier")
	title := firstNonEmpty(a.str(rec, "ActionName"), a.str(rec, "ActionNameShort"), asked)
	return problem.JSON(w, http.StatusOK, RouteSettings{
		ActionID:    &id,
		PageID:      &id,
		CoreAbout:   &About{Heading: title, Body: a.str(rec, "HelpUrl")},
		CustomAbout: &About{},
		Breadcrumbs: crumbs,
		ActionTitle: title,
		Errors:      []RouteError{},
	})
}

func failed(e RouteError) RouteSettings {
	return RouteSettings{Breadcrumbs: []Breadcrumb{}, Errors: []RouteError{e}}
}

// meets reports whether p may see a page with requirement req (see settings.serve).
func meets(p *auth.Principal, req string) bool {
	switch {
	case req == "":
		return true
	case p == nil:
		return false
	case p.Operator:
		return true
	case strings.EqualFold(req, OperatorRequirement):
		return false
	}
	want := engine.Slugify(req)
	for _, role := range p.Roles {
		if engine.Slugify(role) == want {
			return true
		}
	}
	return false
}

// settings serves routes/settings with the PlatformAction descriptor and its ActionUrl,
// resolved once by resolve (the route's Needs).
type settings struct {
	res *engine.Resource
	url *engine.Field
}

// resolve resolves the PlatformAction descriptor and its ActionUrl in reg and keeps them.
func (s *settings) resolve(reg *engine.Registry) error {
	res, ok := reg.ByName("PlatformAction")
	if !ok {
		return fmt.Errorf("platform: route settings: no PlatformAction descriptor is loaded")
	}
	url, ok := res.Member("ActionUrl")
	if !ok {
		return fmt.Errorf("platform: route settings: PlatformAction has no ActionUrl")
	}
	s.res, s.url = res, url
	return nil
}

// in returns the reader of the PlatformAction records of store.
func (s *settings) in(store *engine.Store) *actions {
	return &actions{store: store, res: s.res, url: s.url}
}

// actions reads PlatformAction records of one partition.
type actions struct {
	store *engine.Store
	res   *engine.Resource
	url   *engine.Field
}

// byURL finds the action stored with url or "/"+url (url has no leading "/"): at most two
// indexed equality queries. It returns nil when there is none.
func (a *actions) byURL(ctx context.Context, url string) (engine.Record, error) {
	for _, v := range []string{url, "/" + url} {
		var found engine.Record
		// Stream rather than List: List would add a count statement for a full first page.
		err := a.store.Stream(ctx, a.res, engine.Query{
			Conds: []engine.Cond{{Field: a.url, Op: engine.MatchEq, Value: v}},
			Page:  1, Take: 1, Fields: a.res.Output,
		}, engine.AllOrganizations(), func(rec engine.Record) error {
			found = rec
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("platform: route settings %q: %w", url, err)
		}
		if found != nil {
			return found, nil
		}
	}
	return nil, nil
}

// chain calls fn for rec and then for each action up the parent chain named by member, stopping
// at a null or dangling parent, at an action already seen (a cycle) or after MaxActionDepth
// actions. fn returns false to stop early.
func (a *actions) chain(ctx context.Context, rec engine.Record, member string, fn func(engine.Record) bool) error {
	seen := map[string]bool{}
	for depth := 1; ; depth++ {
		id := a.str(rec, "ActionIdentifier")
		seen[id] = true
		if !fn(rec) {
			return nil
		}
		parent := a.str(rec, member)
		if parent == "" || depth >= MaxActionDepth {
			return nil
		}
		if seen[parent] {
			slog.Warn("route settings: action parent cycle", "partition", a.store.Partition, "member", member, "action", id, "parent", parent)
			return nil
		}
		next, err := a.store.Get(ctx, a.res, []any{parent}, nil, engine.AllOrganizations())
		if engine.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("platform: route settings: %s of %s: %w", member, id, err)
		}
		rec = next
	}
}

// breadcrumbs returns the navigation path from the root of rec's navigation-parent chain to rec.
func (a *actions) breadcrumbs(ctx context.Context, rec engine.Record) ([]Breadcrumb, error) {
	var out []Breadcrumb
	err := a.chain(ctx, rec, "NavigationParentActionIdentifier", func(r engine.Record) bool {
		b := Breadcrumb{Text: firstNonEmpty(a.str(r, "ActionNameShort"), a.str(r, "ActionName"))}
		if u := a.str(r, "ActionUrl"); u != "" {
			b.URL = "/" + strings.TrimLeft(u, "/")
		}
		out = append(out, b)
		return true
	})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// requirement returns rec's AuthorizationRequirement, or the first non-empty one up its
// permission-parent chain.
func (a *actions) requirement(ctx context.Context, rec engine.Record) (string, error) {
	var req string
	err := a.chain(ctx, rec, "PermissionParentActionIdentifier", func(r engine.Record) bool {
		req = strings.TrimSpace(a.str(r, "AuthorizationRequirement"))
		return req == ""
	})
	return req, err
}

// str returns a string or uuid member, "" when null.
func (a *actions) str(rec engine.Record, member string) string {
	s, _ := rec.Get(a.res, member).(string)
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
