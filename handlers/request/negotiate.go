package request

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"credo/engine"
	"credo/handlers/problem"
)

// JSONOffer is JSON as an answer: also asked for as its problem type or text/json.
var JSONOffer = Offer{Type: "application/json", Aliases: []string{"application/problem+json", "text/json"}}

// NegotiateFor is Negotiate over r's Accept header for the answer written to w: it first adds
// Accept to w's Vary header (once), whatever the outcome, since the answer — the
// representation, a 406, a 304 of that representation — depends on Accept, and a cache must
// not serve it to a client that sent another Accept (RFC 9110 §12.5.5). Every route that
// reads Accept negotiates here.
func NegotiateFor(w http.ResponseWriter, r *http.Request, offers ...Offer) (string, error) {
	AddVary(w.Header(), "Accept")
	return Negotiate(r.Header.Get("Accept"), offers...)
}

// AddVary adds a request header's name to h's Vary unless Vary already names it (or is "*").
func AddVary(h http.Header, name string) {
	for _, v := range h.Values("Vary") {
		for v != "" {
			var f string
			f, v, _ = strings.Cut(v, ",")
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, name) {
				return
			}
		}
	}
	h.Add("Vary", name)
}

// Offer is a media type an answer can take, with the other media types that ask for it
// (text/json for application/json, say).
type Offer struct {
	Type    string
	Aliases []string
}

// Negotiate picks, from offers (in order of preference), the media type that the Accept header
// ranks highest (decisions §3): each range of the header, in its order, names the offer it
// matches exactly, by an alias, or by a wildcard (*/* the first offer, type/* the first offer of
// that type); the range with the highest q wins, the first on a tie; a range with q=0 or a
// malformed q is ignored. No Accept, or an empty one, takes the first offer. No match is a 406
// problem naming the offers.
func Negotiate(accept string, offers ...Offer) (string, error) {
	switch accept {
	case offers[0].Type, "*/*": // what most clients send: no parsing
		return offers[0].Type, nil
	}
	if strings.TrimSpace(accept) == "" {
		return offers[0].Type, nil
	}
	best, bestQ := "", 0.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		if m := match(mt, offers); m != "" && q > bestQ {
			best, bestQ = m, q
		}
	}
	if best == "" {
		types := make([]string, len(offers))
		for i, o := range offers {
			types[i] = o.Type
		}
		return "", problem.New(http.StatusNotAcceptable, "Accept %s is not offered here; use %s.", engine.Quoted(accept), strings.Join(types, " or "))
	}
	return best, nil
}

// match returns the offer that the media range mt names, or "".
func match(mt string, offers []Offer) string {
	for _, o := range offers {
		if o.Type == mt {
			return o.Type
		}
	}
	for _, o := range offers {
		for _, a := range o.Aliases {
			if a == mt {
				return o.Type
			}
		}
	}
	if mt == "*/*" {
		return offers[0].Type
	}
	if major, ok := strings.CutSuffix(mt, "/*"); ok {
		for _, o := range offers {
			if strings.HasPrefix(o.Type, major+"/") {
				return o.Type
			}
		}
	}
	return ""
}
