package observe

import (
	"context"
	"time"
)

// The kinds of credential that TokenIssued counts.
const (
	KindToken  = "token"
	KindCookie = "cookie"
)

// The outcomes of a people import that Imported records.
const (
	ImportDone    = "imported"
	ImportRefused = "refused" // the file had problems; nothing was written
	ImportFailed  = "failed"  // the database failed
)

// TokenIssued counts an access token or session cookie issued by the request of ctx.
func TokenIssued(ctx context.Context, kind string) {
	if o := observerOf(From(ctx)); o != nil {
		o.tokens.WithLabelValues(kind).Inc()
	}
}

// Credential labels that the observer itself knows: a request that presented no credential,
// and a refusal whose kind of credential no authenticator recorded (SetCredential).
const (
	CredentialNone    = "none"
	CredentialUnknown = "unknown"
)

// AuthFailure counts a request refused with 401 for a reason (a closed set, see auth.Reason;
// or with 403 for the reason cross_origin, a session cookie's write from another origin),
// under the kind of credential the request presented (SetCredential; CredentialUnknown when
// none was recorded).
func AuthFailure(ctx context.Context, reason string) {
	e := From(ctx)
	if o := observerOf(e); o != nil {
		credential := e.credential
		if credential == "" {
			credential = CredentialUnknown
		}
		o.authFailures.WithLabelValues(reason, credential).Inc()
	}
}

// Exported records a gradebook export file of a format written since start.
func Exported(ctx context.Context, format string, bytes int64, start time.Time) {
	if o := observerOf(From(ctx)); o != nil {
		o.exportBytes.WithLabelValues(format).Observe(float64(bytes))
		o.exportTime.WithLabelValues(format).Observe(since(start))
	}
}

// Imported records a people import of rows that ended with outcome, begun at start.
func Imported(ctx context.Context, outcome string, rows int, start time.Time) {
	if o := observerOf(From(ctx)); o != nil {
		o.importRows.WithLabelValues(outcome).Observe(float64(rows))
		o.importTime.WithLabelValues(outcome).Observe(since(start))
	}
}

// The outcomes of a request with an Idempotency-Key that Idempotency counts.
const (
	IdempotencyStored    = "stored"     // the first request: answered and its answer kept
	IdempotencyReplayed  = "replayed"   // a retry answered with the kept answer
	IdempotencyInFlight  = "in_flight"  // a retry while the first request was still running (409)
	IdempotencyMismatch  = "mismatch"   // the key with another request (422)
	IdempotencyNotStored = "not_stored" // answered, but not kept: a 4xx or 5xx, or the key lost its lease
	IdempotencyLost      = "lost"       // a retry of a request whose work was done but whose answer was not kept
)

// Idempotency counts a request with an Idempotency-Key by its outcome.
func Idempotency(ctx context.Context, outcome string) {
	if o := observerOf(From(ctx)); o != nil {
		o.idempotency.WithLabelValues(outcome).Inc()
	}
}
