// Package request reads what a client sends — the query string, path variables and a JSON
// body — for the generated v2 handlers, the modules and version 1 alike, and refuses what is
// malformed with a 4xx problem naming the parameter or member, rather than dropping or
// repairing it.
package request

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"credo/engine"
)

// Query returns the request's query parameters; see ParseQuery.
func Query(r *http.Request) (url.Values, error) {
	if r.URL.RawQuery == "" {
		return url.Values{}, nil
	}
	return ParseQuery(r.URL.RawQuery)
}

// ParseQuery reads a query string as url.ParseQuery does, except that what url.ParseQuery
// (and so http.Request.URL.Query) drops or keeps silently is a *engine.ValidationError naming
// the parameter: a malformed escape (`Take=%zz`, `%zz=1`), a `;` (`Take=5;Sort=Nope`: only `&`
// separates parameters), and a name or value that is not valid UTF-8 (`%ff`, `%c3%28`, a
// surrogate `%ed%a0%80`) or holds U+0000 (`%00`). A parameter whose name cannot be read is
// named as written. Empty pieces (`a=1&&b=2`) are skipped.
func ParseQuery(raw string) (url.Values, error) {
	values := url.Values{}
	verr := &engine.ValidationError{}
	for raw != "" {
		var piece string
		piece, raw, _ = strings.Cut(raw, "&")
		if piece == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(piece, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			shown := engine.ShownName(rawName)
			verr.Add(shown, fmt.Sprintf("the parameter name %s has a malformed %%-escape", shown))
			continue
		}
		if p := engine.CheckText(name); p != "" {
			shown := engine.Quoted(name)
			verr.Add(shown, fmt.Sprintf("the parameter name %s %s", shown, p))
			continue
		}
		shown := engine.ShownName(name)
		if strings.Contains(rawName, ";") || strings.Contains(rawValue, ";") {
			verr.Add(shown, fmt.Sprintf("%s: ';' does not separate parameters; use '&' (or %%3B for a ';' in a value)", shown))
			continue
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			verr.Add(shown, fmt.Sprintf("%s has a malformed %%-escape in its value", shown))
			continue
		}
		if p := engine.CheckText(value); p != "" {
			verr.Add(shown, fmt.Sprintf("%s %s", shown, p))
			continue
		}
		values[name] = append(values[name], value)
	}
	if !verr.Empty() {
		verr.Detail = "The query string is malformed."
		return nil, verr
	}
	return values, nil
}

// PathValue returns the path variable name of a route. Path segments are text like any other
// (decisions §4): one that is not valid UTF-8 or holds U+0000 is a 400 naming the variable.
func PathValue(r *http.Request, name string) (string, error) {
	v := mux.Vars(r)[name]
	if err := CheckPath(name, v); err != nil {
		return "", err
	}
	return v, nil
}

// CheckPath checks one path segment's text (see PathValue); member names it in the problem.
func CheckPath(member, segment string) error {
	if p := engine.CheckText(segment); p != "" {
		return engine.InvalidMember(member, "the path segment %s %s", member, p)
	}
	return nil
}
