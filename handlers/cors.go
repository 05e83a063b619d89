package handlers

import (
	"net/http"

	"github.com/rs/cors"

	"credo/handlers/idempotency"
	"credo/handlers/observe"
	"credo/handlers/request"
)

// corsMaxAge is how long a browser may cache a preflight answer, in seconds.
const corsMaxAge = 600

// cors lets the browser scripts of CORSOrigins call the API with a bearer token. A preflight
// (OPTIONS with Access-Control-Request-Method) from an allowed origin is answered 204 with the
// allowed methods and headers; from any other origin it gets no CORS headers, and the browser
// refuses the call. Credentials (cookies) are not allowed across origins: a browser client on
// another origin authenticates with Authorization, which a cross-site request cannot forge.
// github.com/rs/cors does the header parsing and matching (origins, wildcards such as
// https://*.example.com, Vary) that is easy to get subtly wrong by hand.
func (s *Server) cors(next http.Handler) http.Handler {
	if len(s.CORSOrigins) == 0 {
		return next
	}
	c := cors.New(cors.Options{
		AllowedOrigins: s.CORSOrigins,
		AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
			http.MethodPatch, http.MethodDelete},
		AllowedHeaders: []string{"Authorization", "Content-Type", "Accept", observe.RequestIDHeader, idempotency.KeyHeader,
			request.IfMatchHeader, request.IfNoneMatchHeader},
		ExposedHeaders: []string{observe.RequestIDHeader, "X-Query-Pagination", "Location", "Content-Disposition",
			"WWW-Authenticate", "Allow", "Retry-After", idempotency.ReplayedHeader, "ETag"},
		MaxAge: corsMaxAge,
	})
	h := c.Handler(next)
	preflight := s.Observer.Route("preflight")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			observe.NameRoute(r, preflight)
		}
		h.ServeHTTP(w, r)
	})
}
