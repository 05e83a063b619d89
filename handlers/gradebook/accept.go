package gradebook

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"credo/handlers/problem"
)

// accept refuses with a 406 a request whose Accept header allows none of the media type's
// forms: the type itself, its type/*, */*, or no Accept at all (decisions §3).
func accept(r *http.Request, mediaType string) error {
	header := strings.TrimSpace(r.Header.Get("Accept"))
	if header == "" {
		return nil
	}
	major, _, _ := strings.Cut(mediaType, "/")
	for _, part := range strings.Split(header, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, err := strconv.ParseFloat(params["q"], 64); params["q"] != "" && (err != nil || q <= 0) {
			continue
		}
		if mt == mediaType || mt == "*/*" || mt == major+"/*" {
			return nil
		}
	}
	return problem.New(http.StatusNotAcceptable, "Accept %q is not offered here; use %s.", header, mediaType)
}
