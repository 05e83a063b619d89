package handlers

import (
	"net/url"
	"strings"
)

// isCleanPath reports whether a request path is absolute and has no empty, "." or ".."
// segment (a trailing slash is allowed: it is a segment of its own that no route has).
// credo answers an unclean path with 404 rather than redirecting to its cleaned form, as
// gorilla/mux and net/http's ServeMux would: a redirect turns a POST or DELETE into another
// request, or drops it, and `/v2/e01/a/../b` naming route b is a door for path confusion in
// proxies and logs. The path is the decoded one, so `%2e%2e` and `%2F%2F` count too.
func isCleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for i := 1; i <= len(p); i++ {
		// p[start:i] is the segment after the slash at start-1 when p[i] is a slash or the end.
		start := i
		for i < len(p) && p[i] != '/' {
			i++
		}
		seg := p[start:i]
		last := i == len(p)
		if (seg == "" && !last) || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// hasEncodedSlash reports whether u's path holds a percent-encoded slash (%2F): decoded, it
// would be a separator, and `/v2/e01/security%2Fusers` would name the route
// `/v2/e01/security/users` that a proxy's per-path rule sees as another path (one segment).
// No route takes a slash inside a segment, so such a path is refused like an unclean one.
// net/url keeps the path as sent in RawPath only when it differs from Path's own encoding, as
// one with %2F does: a request without RawPath (nearly all) is answered without a scan.
func hasEncodedSlash(u *url.URL) bool {
	return u.RawPath != "" && strings.Count(u.EscapedPath(), "/") != strings.Count(u.Path, "/")
}
