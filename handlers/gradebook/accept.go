package gradebook

import (
	"net/http"

	"credo/handlers/request"
)

// accept refuses with a 406 a request whose Accept header allows none of the media type's
// forms: the type itself, its type/*, */*, or no Accept at all (request.Negotiate).
func accept(r *http.Request, mediaType string) error {
	_, err := request.Negotiate(r.Header.Get("Accept"), request.Offer{Type: mediaType})
	return err
}
