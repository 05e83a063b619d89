package handlers

import (
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/gorilla/mux"
)

// TestPatternMatchesLikeMux checks the pattern matcher against gorilla/mux's own path
// templates: same verdict and same variables for every template and path.
func TestPatternMatchesLikeMux(t *testing.T) {
	templates := []string{
		"/v2/{partition}/security/users-comments",
		"/v2/{partition}/security/users-comments/count",
		"/v2/{partition}/security/users-comments/{CommentIdentifier}",
		"/v2/{partition}/security/users-connections/{FromUserIdentifier}/{ToUserIdentifier}",
		"/v2/{partition}/security/settings/",
		"/v2/{partition}/progress/gradebooks/download/{key}",
	}
	paths := []string{
		"/v2/e01/security/users-comments",
		"/v2/e01/security/users-comments/",
		"/v2/e01/security/users-comments/count",
		"/v2/e01/security/users-comments/count/",
		"/v2/e01/security/users-comments/0190a6f0-0000-7000-8000-000000000001",
		"/v2/e01/security/users-comments/a/b",
		"/v2//security/users-comments/x",
		"/v2/e01/security/users-comments//",
		"/v2/e01/security/users-connections/a/b",
		"/v2/e01/security/users-connections/a/",
		"/v2/e01/security/users-connections/a",
		"/v2/e01/security/settings/",
		"/v2/e01/security/settings",
		"/v2/e01/progress/gradebooks/download/k%20ey",
		"/v2/e01/progress/gradebooks/download/k ey",
		"/v2/e01",
		"/v2/",
		"",
		"/",
	}
	for _, tpl := range templates {
		route := mux.NewRouter().Path(tpl)
		p := compilePattern(tpl)
		for _, path := range paths {
			req := httptest.NewRequest("GET", "/", nil)
			req.URL.Path = path
			var want mux.RouteMatch
			wantOK := route.Match(req, &want)
			vars, gotOK := p.match(path)
			if gotOK != wantOK {
				t.Errorf("%s on %q: pattern says %v, mux says %v", tpl, path, gotOK, wantOK)
				continue
			}
			if wantOK && len(want.Vars)+len(vars) > 0 && !reflect.DeepEqual(vars, want.Vars) {
				t.Errorf("%s on %q: pattern vars %v, mux vars %v", tpl, path, vars, want.Vars)
			}
		}
	}
}
