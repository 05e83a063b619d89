package idempotency

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"credo/auth"
	"credo/handlers/problem"
)

// The headers of the protocol.
const (
	// KeyHeader carries the client's key for a request it may retry.
	KeyHeader = "Idempotency-Key"
	// ReplayedHeader marks an answer that was kept from the first request with the key.
	ReplayedHeader = "Idempotent-Replayed"
)

// MaxKeyLength is the longest key, in characters: enough for a UUID or a ULID with a prefix,
// short enough that the key costs nothing to hash and log.
const MaxKeyLength = 255

// keyOf returns the request's Idempotency-Key, "" when it sends none. The key is the header's
// value as it is (a client that sends the draft's structured-field string, "…", and one that
// sends the bare text use two keys): 1 to MaxKeyLength printable ASCII characters (space to
// tilde). Anything else, or the header sent twice, is a 400 naming the header.
func keyOf(r *http.Request) (string, error) {
	vs := r.Header.Values(KeyHeader)
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", badKey("Idempotency-Key is sent more than once; send one key.")
	}
	k := vs[0]
	if k == "" || len(k) > MaxKeyLength {
		return "", badKey("Idempotency-Key must be 1 to 255 printable ASCII characters; it is %d characters long.", len(k))
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "", badKey("Idempotency-Key must be printable ASCII (space to ~); character %d is not.", i+1)
		}
	}
	return k, nil
}

// Refuse returns next behind the refusal of Idempotency-Key (route.Route's
// RefusesIdempotencyKey): a request that sends the header, with any value, is a 400 problem
// naming it, saying that the route does not take it and why; one without it goes to next.
// Ignoring the header would let a client believe its retry safe.
func Refuse(why string, next problem.HandlerFunc) problem.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if len(r.Header.Values(KeyHeader)) > 0 {
			return badKey("Idempotency-Key is not taken by this operation; send the request without it. %s", why)
		}
		return next(w, r)
	}
}

func badKey(format string, args ...any) error {
	p := problem.New(http.StatusBadRequest, format, args...)
	p.Errors = map[string][]string{KeyHeader: {p.Detail}}
	return p
}

// keyHash is the stored identity of a key: the caller (user and organization) and the key, so
// that a key sent by another caller, or by the same user acting in another organization, is
// another key, and one caller can never be given another's answer.
func keyHash(p *auth.Principal, key string) string {
	return digest(p.UserIdentifier, p.OrganizationIdentifier, key)
}

// fingerprint identifies the request a key was first used with: its method, its path and
// query, and its body byte for byte (a retry sends the same bytes; re-encoded JSON is another
// request).
func fingerprint(r *http.Request, body []byte) string {
	return digest(r.Method, r.URL.RequestURI(), string(body))
}

// digest is the SHA-256, in hex, of the parts, each preceded by its length so that no two
// lists of parts give the same input.
func digest(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		l := uint64(len(p))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}
