package handlers

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"credo/engine"
	"credo/handlers/problem"
)

// negotiate picks the response format from Accept: JSON for application/json, application/*,
// */* or no Accept; CSV for text/csv where csvOK. Anything else is a 406 (decisions §3).
func negotiate(r *http.Request, csvOK bool) (engine.Format, error) {
	accept := r.Header.Get("Accept")
	switch accept {
	case "application/json", "*/*": // what most clients send: no parsing
		return engine.FormatJSON, nil
	}
	if strings.TrimSpace(accept) == "" {
		return engine.FormatJSON, nil
	}
	best, bestQ := engine.Format(""), -1.0
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
		if q <= 0 {
			continue
		}
		var f engine.Format
		switch mt {
		case "application/json", "application/*", "*/*", "application/problem+json", "text/json":
			f = engine.FormatJSON
		case "text/csv", "text/*":
			if csvOK {
				f = engine.FormatCSV
			} else if mt == "text/*" {
				continue
			}
		}
		if f != "" && q > bestQ {
			best, bestQ = f, q
		}
	}
	if best == "" {
		offered := "application/json"
		if csvOK {
			offered += " or text/csv"
		}
		return "", problem.New(http.StatusNotAcceptable, "Accept %q is not offered here; use %s.", accept, offered)
	}
	return best, nil
}
