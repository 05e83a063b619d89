package security

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"credo/auth"
	"credo/engine"
	"credo/handlers/observe"
)

// The kinds of credential a refusal is counted and logged under.
const (
	failBearer = "bearer"
	failCookie = "cookie"
	failSecret = "secret"
	failOther  = "other" // an Authorization header of a scheme other than Bearer
	failNone   = observe.CredentialNone
)

// failed records a refused credential. Only refusals count: auth.ErrUnauthenticated, and the
// 403 of a session cookie's write from another origin (auth.ReasonCrossOrigin, a forgery
// attempt or a misbuilt page); a storage failure is the request's 500, logged where it is
// written. The refusal is counted once, when its 401 (or 403) is written, in
// credo_auth_failures_total by reason and by the kind of credential recorded here (observe.SetCredential): bearer (v2 or version-1 access tokens),
// cookie, secret (tokens/generate and version-1 secret authentication), other (an
// Authorization header whose scheme is not Bearer, such as Basic) or none. The log line
// names the partition, the kind of credential, the reason, the client address and the route,
// never the credential: the reasons auth and this package give are written not to contain one.
// Lines of refused credentials are bounded per second (observe.Refused); a request without
// one logs at debug level.
func (s *Security) failed(r *http.Request, partition, kind string, err error) {
	if !errors.Is(err, auth.ErrUnauthenticated) && auth.ReasonOf(err) != auth.ReasonCrossOrigin {
		return
	}
	observe.SetCredential(r, kind)
	attrs := []slog.Attr{slog.String("partition", partition), slog.String("credential", kind), slog.String("reason", err.Error()),
		slog.String("client", s.limits.Clients.Address(r)), slog.String("method", engine.ShownName(r.Method)), slog.String("path", engine.ShownPath(r.URL.EscapedPath()))}
	if kind == failNone {
		// A client that sent nothing is routine, not an attack.
		slog.LogAttrs(r.Context(), slog.LevelDebug, "authentication failed", attrs...)
		return
	}
	observe.Refused(r, "authentication failed", attrs...)
}

// credentialOf names the kind of credential a request to a partition presented to the
// Authenticator: a session cookie of the old name (auth.DefaultCookieName, refused) counts as
// a cookie.
func credentialOf(r *http.Request, partition string) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, v, _ := strings.Cut(strings.TrimSpace(h), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return failOther
		}
		if strings.Count(v, ".") != 2 && !strings.HasPrefix(r.URL.Path, "/v2/") {
			return failSecret
		}
		return failBearer
	}
	for _, name := range []string{CookieName(partition), auth.DefaultCookieName} {
		if _, err := r.Cookie(name); err == nil {
			return failCookie
		}
	}
	return failNone
}
