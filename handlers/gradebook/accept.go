package gradebook

import (
	"net/http"

	"credo/handlers/request"
)

// accept refuses with a 406 a request whose Accept header allows none of the media type's
// forms: the type itself, its type/*, */*, or no Accept at all (request.NegotiateFor, which
// marks w's answer Vary: Accept).
func accept(w http.ResponseWriter, r *http.Request, mediaType string) error {
	_, err := request.NegotiateFor(w, r, request.Offer{Type: mediaType})
	return err
}
