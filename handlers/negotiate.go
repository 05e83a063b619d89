package handlers

import (
	"net/http"

	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// jsonOffer and csvOffer are what a v2 answer can be: JSON (also asked for as its problem type
// or text/json), and CSV where the operation offers it.
var (
	jsonOffer = request.JSONOffer
	csvOffer  = request.Offer{Type: "text/csv"}
	jsonOnly  = []request.Offer{jsonOffer}
	jsonOrCSV = []request.Offer{jsonOffer, csvOffer}
)

// negotiate picks the response format from Accept (request.NegotiateFor, which marks w's
// answer Vary: Accept): JSON, or CSV where csvOK. Anything else is a 406 (decisions §3).
func negotiate(w http.ResponseWriter, r *http.Request, csvOK bool) (engine.Format, error) {
	offers := jsonOnly
	if csvOK {
		offers = jsonOrCSV
	}
	mt, err := request.NegotiateFor(w, r, offers...)
	if err != nil {
		return "", err
	}
	if mt == csvOffer.Type {
		return engine.FormatCSV, nil
	}
	return engine.FormatJSON, nil
}

// acceptsJSON is h behind get's Accept check: an Accept without JSON is a 406 before h runs
// (decisions §3). A create is wrapped in it outside its Idempotency-Key keeper, so that nothing
// is written, and no kept answer replayed, to a client that cannot take JSON.
func acceptsJSON(h problem.HandlerFunc) problem.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := negotiate(w, r, false); err != nil {
			return err
		}
		return h(w, r)
	}
}
