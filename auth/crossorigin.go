package auth

import (
	"net/http"
)

// sameOrigin is net/http's cross-site request forgery check, with no trusted origin and no
// bypass: a POST, PUT, PATCH or DELETE that a browser marks as sent from another origin
// (Sec-Fetch-Site other than same-origin or none; without it, an Origin whose host is not
// the request's Host) fails it. Requests without either header (curl, servers) pass, as do
// GET, HEAD and OPTIONS.
var sameOrigin http.CrossOriginProtection

// checkCookieOrigin refuses a write that a session cookie authenticates when the browser says
// another origin's page sent it. The browser attaches the cookie to every request to the
// API's site, whichever page makes it (SameSite=Lax keeps it off cross-site subrequests, not
// off those of a sibling subdomain), and a body the API takes as JSON needs no preflight when
// it carries no Content-Type (a Blob's), so without this check any page of the site could
// write as the signed-in user. A script of another origin authenticates with a bearer token,
// which no other page can attach; CORS never admits cookies (handlers/cors.go). The refusal
// carries ReasonCrossOrigin, under which it is counted with the 401s.
func checkCookieOrigin(r *http.Request) error {
	if err := sameOrigin.Check(r); err != nil {
		return forbiddenFor(ReasonCrossOrigin, "a session cookie authenticates %s only from the API's own origin, and the browser marked this request as sent by a page of another origin; a script of another origin sends Authorization: Bearer <token>",
			r.Method)
	}
	return nil
}
