package platform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"testing"

	"credo/auth"
	"credo/engine"
	"credo/handlers/platform"
	"credo/internal/testenv"
)

// action is the part of a PlatformAction the tests set.
type action struct {
	ActionIdentifier                 string
	NavigationParentActionIdentifier *string `json:",omitempty"`
	PermissionParentActionIdentifier *string `json:",omitempty"`
	ActionName                       string  `json:",omitempty"`
	ActionNameShort                  string  `json:",omitempty"`
	ActionUrl                        string  `json:",omitempty"`
	AuthorizationRequirement         string  `json:",omitempty"`
	HelpUrl                          string  `json:",omitempty"`
}

func id(n int) string { return fmt.Sprintf("00000000-0000-7000-8000-%012d", n) }

func ref(n int) *string { s := id(n); return &s }

func seedActions(t *testing.T, store *engine.Store, actions []action) {
	t.Helper()
	res := store.Registry().MustByName("PlatformAction")
	for _, a := range actions {
		body, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := testenv.CreateJSON(context.Background(), store, res, body, engine.AllOrganizations()); err != nil {
			t.Fatalf("create action %s: %v", a.ActionIdentifier, err)
		}
	}
}

func TestRouteSettings(t *testing.T) {
	actions := []action{
		// A three-level navigation chain; urls stored with and without the leading "/".
		{ActionIdentifier: id(1), ActionName: "Administration", ActionNameShort: "Admin", ActionUrl: "/admin"},
		{ActionIdentifier: id(2), NavigationParentActionIdentifier: ref(1), ActionName: "People", ActionUrl: "admin/people"},
		{ActionIdentifier: id(3), NavigationParentActionIdentifier: ref(2), ActionName: "Edit a Person",
			ActionNameShort: "Edit", ActionUrl: "/admin/people/edit", HelpUrl: "https://help.example/edit"},
		// Requirements: operator only, a role, and one inherited through the permission parent.
		{ActionIdentifier: id(10), ActionName: "Operations", ActionUrl: "ops", AuthorizationRequirement: "Operator"},
		{ActionIdentifier: id(11), ActionName: "Operations Log", ActionUrl: "ops/log", PermissionParentActionIdentifier: ref(10),
			NavigationParentActionIdentifier: ref(10)},
		{ActionIdentifier: id(12), ActionName: "Reports", ActionUrl: "reports", AuthorizationRequirement: "Learning Administrators"},
		// A navigation cycle 20 → 21 → 22 → 20, and a permission cycle 21 ↔ 22 with no requirement.
		{ActionIdentifier: id(20), NavigationParentActionIdentifier: ref(21), ActionName: "Loop A", ActionUrl: "loop/a"},
		{ActionIdentifier: id(21), NavigationParentActionIdentifier: ref(22), PermissionParentActionIdentifier: ref(22), ActionName: "Loop B", ActionUrl: "loop/b"},
		{ActionIdentifier: id(22), NavigationParentActionIdentifier: ref(20), PermissionParentActionIdentifier: ref(21), ActionName: "Loop C", ActionUrl: "loop/c"},
		// A dangling navigation parent, and a url-less menu heading.
		{ActionIdentifier: id(30), NavigationParentActionIdentifier: ref(99), ActionName: "Orphan", ActionUrl: "orphan"},
		{ActionIdentifier: id(40), ActionName: "Menu"},
		{ActionIdentifier: id(41), NavigationParentActionIdentifier: ref(40), ActionName: "Item", ActionUrl: "menu/item"},
		// The home page has the empty url.
		{ActionIdentifier: id(50), ActionName: "Home", ActionUrl: "/"},
	}
	// A navigation chain longer than MaxActionDepth: 100 ← 101 ← … ← 119.
	for i := 100; i < 120; i++ {
		a := action{ActionIdentifier: id(i), ActionNameShort: fmt.Sprintf("D%d", i), ActionUrl: fmt.Sprintf("deep/%d", i)}
		if i > 100 {
			a.NavigationParentActionIdentifier = ref(i - 1)
		}
		actions = append(actions, a)
	}
	deep := make([]platform.Breadcrumb, 0, platform.MaxActionDepth)
	for i := 120 - platform.MaxActionDepth; i < 120; i++ {
		deep = append(deep, platform.Breadcrumb{Text: fmt.Sprintf("D%d", i), URL: fmt.Sprintf("/deep/%d", i)})
	}

	user := &auth.Principal{UserIdentifier: id(900), Roles: []string{"learners"}}
	admin := &auth.Principal{UserIdentifier: id(901), Roles: []string{"learning-administrators"}}
	operator := &auth.Principal{UserIdentifier: id(902), Operator: true}

	crumb := func(text, url string) platform.Breadcrumb { return platform.Breadcrumb{Text: text, URL: url} }
	tests := []struct {
		name   string
		url    *string // nil: no url parameter
		caller *auth.Principal
		// want is checked for ActionId, ActionTitle, Breadcrumbs and the about texts when
		// errCode is 0.
		id, title, help string
		crumbs          []platform.Breadcrumb
		errCode         int
	}{
		{name: "three levels, leading slash in the request", url: str("/admin/people/edit"), caller: user,
			id: id(3), title: "Edit a Person", help: "https://help.example/edit",
			crumbs: []platform.Breadcrumb{crumb("Admin", "/admin"), crumb("People", "/admin/people"), crumb("Edit", "/admin/people/edit")}},
		{name: "three levels, no leading slash", url: str("admin/people/edit"), caller: user, id: id(3), title: "Edit a Person",
			help:   "https://help.example/edit",
			crumbs: []platform.Breadcrumb{crumb("Admin", "/admin"), crumb("People", "/admin/people"), crumb("Edit", "/admin/people/edit")}},
		{name: "stored without slash, asked with", url: str("/admin/people"), caller: user, id: id(2), title: "People",
			crumbs: []platform.Breadcrumb{crumb("Admin", "/admin"), crumb("People", "/admin/people")}},
		{name: "root", url: str("admin"), caller: user, id: id(1), title: "Administration",
			crumbs: []platform.Breadcrumb{crumb("Admin", "/admin")}},
		{name: "unknown url", url: str("/nowhere"), caller: operator, errCode: 404},
		{name: "url is case-sensitive", url: str("/Admin"), caller: user, errCode: 404},
		{name: "operator requirement, not an operator", url: str("ops"), caller: admin, errCode: 403},
		{name: "operator requirement, anonymous", url: str("ops"), errCode: 403},
		{name: "operator requirement, operator", url: str("/ops"), caller: operator, id: id(10), title: "Operations",
			crumbs: []platform.Breadcrumb{crumb("Operations", "/ops")}},
		{name: "inherited requirement", url: str("ops/log"), caller: admin, errCode: 403},
		{name: "inherited requirement, operator", url: str("ops/log"), caller: operator, id: id(11), title: "Operations Log",
			crumbs: []platform.Breadcrumb{crumb("Operations", "/ops"), crumb("Operations Log", "/ops/log")}},
		{name: "role requirement, role held", url: str("reports"), caller: admin, id: id(12), title: "Reports",
			crumbs: []platform.Breadcrumb{crumb("Reports", "/reports")}},
		{name: "role requirement, role missing", url: str("reports"), caller: user, errCode: 403},
		{name: "role requirement, operator", url: str("reports"), caller: operator, id: id(12), title: "Reports",
			crumbs: []platform.Breadcrumb{crumb("Reports", "/reports")}},
		{name: "navigation cycle ends at the repeat", url: str("loop/a"), caller: user, id: id(20), title: "Loop A",
			crumbs: []platform.Breadcrumb{crumb("Loop C", "/loop/c"), crumb("Loop B", "/loop/b"), crumb("Loop A", "/loop/a")}},
		{name: "permission cycle without requirement", url: str("loop/b"), caller: user, id: id(21), title: "Loop B",
			crumbs: []platform.Breadcrumb{crumb("Loop A", "/loop/a"), crumb("Loop C", "/loop/c"), crumb("Loop B", "/loop/b")}},
		{name: "dangling parent", url: str("orphan"), caller: user, id: id(30), title: "Orphan",
			crumbs: []platform.Breadcrumb{crumb("Orphan", "/orphan")}},
		{name: "url-less parent", url: str("menu/item"), caller: user, id: id(41), title: "Item",
			crumbs: []platform.Breadcrumb{crumb("Menu", ""), crumb("Item", "/menu/item")}},
		{name: "chain capped at MaxActionDepth", url: str("deep/119"), caller: user, id: id(119), title: "D119", crumbs: deep},
		{name: "missing url is the home page", caller: user, id: id(50), title: "Home",
			crumbs: []platform.Breadcrumb{crumb("Home", "/")}},
	}

	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			store := openStore(t, b.URL)
			seedActions(t, store, actions)
			routes := platform.Routes(platform.Config{})
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					target := "platform/routes/settings"
					asked := ""
					if tc.url != nil {
						asked = *tc.url
						target += "?url=" + url.QueryEscape(asked)
					}
					w := call(t, routes, store, tc.caller, target)
					if w.Code != http.StatusOK {
						t.Fatalf("status %d, want 200: %s", w.Code, w.Body)
					}
					var got platform.RouteSettings
					decode(t, w, &got)
					want := platform.RouteSettings{Breadcrumbs: []platform.Breadcrumb{}, Errors: []platform.RouteError{}}
					switch tc.errCode {
					case 0:
						want.ActionID, want.PageID, want.ActionTitle, want.Breadcrumbs = &tc.id, &tc.id, tc.title, tc.crumbs
						want.CoreAbout = &platform.About{Heading: tc.title, Body: tc.help}
						want.CustomAbout = &platform.About{}
					case 404:
						want.Errors = []platform.RouteError{{Code: 404, Summary: "Url Not Found: " + asked,
							Description: fmt.Sprintf("No platform action has the url %q.", asked), Data: map[string]string{"Url": asked}}}
					case 403:
						if len(got.Errors) == 1 {
							want.Errors = []platform.RouteError{{Code: 403, Summary: "Access Denied: " + asked,
								Description: got.Errors[0].Description, Data: got.Errors[0].Data}}
							if got.Errors[0].Data["Url"] != asked || got.Errors[0].Data["Requirement"] == "" {
								t.Errorf("403 Data %v, want Url %q and the Requirement", got.Errors[0].Data, asked)
							}
						}
					}
					if !reflect.DeepEqual(got, want) {
						gb, _ := json.Marshal(got)
						wb, _ := json.Marshal(want)
						t.Errorf("got  %s\nwant %s", gb, wb)
					}
				})
			}
			t.Run("bad parameters", func(t *testing.T) {
				for _, q := range []string{"?url=a&url=b", "?Url=a"} {
					w := call(t, routes, store, user, "platform/routes/settings"+q)
					if w.Code != http.StatusBadRequest {
						t.Errorf("%s: status %d, want 400", q, w.Code)
					}
				}
			})
		})
	}
}

func str(s string) *string { return &s }

// TestRouteSettingsHostileURL: a url the stores cannot compare (invalid UTF-8, U+0000) or a
// malformed query string is a 400 naming the parameter on both stores, not a 500.
func TestRouteSettingsHostileURL(t *testing.T) {
	operator := &auth.Principal{UserIdentifier: id(902), Operator: true}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			store := openStore(t, b.URL)
			seedActions(t, store, []action{{ActionIdentifier: id(1), ActionName: "Home", ActionUrl: "/"}})
			routes := platform.Routes(platform.Config{})
			for _, tc := range []struct{ query, param string }{
				{query: "url=%ff", param: "url"},
				{query: "url=%c3%28", param: "url"},
				{query: "url=%ed%a0%80", param: "url"},
				{query: "url=a%00b", param: "url"},
				{query: "url=%zz", param: "url"},
				{query: "url=a;b", param: "url"},
				{query: "%zz=a", param: "%zz"},
			} {
				w := call(t, routes, store, operator, "platform/routes/settings?"+tc.query)
				var p struct{ Errors map[string][]string }
				_ = json.Unmarshal(w.Body.Bytes(), &p)
				if w.Code != http.StatusBadRequest || p.Errors[tc.param] == nil {
					t.Errorf("%s: %d %s, want a 400 naming %s", tc.query, w.Code, w.Body, tc.param)
				}
			}
		})
	}
}
