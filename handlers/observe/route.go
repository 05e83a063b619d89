package observe

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Route is a route template with its metric series resolved once per method and status, so
// that counting a request is a map lookup under a read lock rather than a label hash.
type Route struct {
	// Template is the route's pattern, e.g. "/v2/{partition}/security/users/{key0}": the route
	// label of the metrics and the access line, never the raw path.
	Template string
	// Probe routes (monitors' checks) are logged at debug.
	Probe bool

	obs    *Observer
	mu     sync.RWMutex
	series map[seriesKey]series
}

type seriesKey struct {
	method string
	status int
}

type series struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// Unmatched is the route label of requests that no route matched.
const Unmatched = "unmatched"

// Route returns the route of a template, creating it on first use. mux templates with
// regular expressions ("{id:[0-9a-f]+}") are reduced to their variable names.
func (o *Observer) Route(template string) *Route {
	o.routesMu.RLock()
	rt := o.routes[template]
	o.routesMu.RUnlock()
	if rt != nil {
		return rt
	}
	o.routesMu.Lock()
	defer o.routesMu.Unlock()
	if rt = o.routes[template]; rt == nil {
		rt = &Route{Template: stripPatterns(template), obs: o, series: map[seriesKey]series{}}
		o.routes[template] = rt
	}
	return rt
}

// Name returns h wrapped so that the requests it serves are recorded under rt.
func Name(rt *Route, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := From(r.Context()); e != nil {
			e.route = rt
		}
		h.ServeHTTP(w, r)
	})
}

// NameRoute records rt as the route of the request; for routers that learn the route while
// matching, such as gorilla/mux's middleware.
func NameRoute(r *http.Request, rt *Route) {
	if e := From(r.Context()); e != nil {
		e.route = rt
	}
}

// series returns the request counter and duration histogram of a method and status.
func (rt *Route) seriesOf(method string, status int) series {
	k := seriesKey{method: method, status: status}
	rt.mu.RLock()
	s, ok := rt.series[k]
	rt.mu.RUnlock()
	if ok {
		return s
	}
	code := strconv.Itoa(status)
	s = series{
		count:    rt.obs.requests.WithLabelValues(rt.Template, method, code),
		duration: rt.obs.duration.WithLabelValues(rt.Template, method, code),
	}
	rt.mu.Lock()
	rt.series[k] = s
	rt.mu.Unlock()
	return s
}

// methods are the methods counted under their own name; any other is "OTHER", so that a
// client cannot create series at will.
var methods = map[string]string{}

func init() {
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions} {
		methods[m] = m
	}
}

func methodLabel(m string) string {
	if l, ok := methods[m]; ok {
		return l
	}
	return "OTHER"
}

// stripPatterns turns "{name:regexp}" into "{name}"; the regular expression may hold braces.
func stripPatterns(t string) string {
	if !strings.Contains(t, ":") {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		b.WriteByte(c)
		if c != '{' {
			continue
		}
		j := i + 1
		for j < len(t) && t[j] != ':' && t[j] != '}' {
			j++
		}
		b.WriteString(t[i+1 : j])
		if j < len(t) && t[j] == ':' {
			depth := 1
			for j++; j < len(t) && depth > 0; j++ {
				switch t[j] {
				case '{':
					depth++
				case '}':
					depth--
				}
			}
			b.WriteByte('}')
			i = j - 1
		} else {
			i = j - 1
		}
	}
	return b.String()
}
