// Package apidocs serves the browsable API reference page: Redoc's standalone bundle, embedded
// in the binary so that the page works without any network but credo's own, rendering the
// OpenAPI document served beside it.
package apidocs

import (
	_ "embed"
	"net/http"
	"strconv"
)

// RedocVersion is the version of the embedded viewer: bundles/redoc.standalone.js of the npm
// package redoc (MIT licence, LICENSE.redoc; redoc.standalone.js.LICENSE.txt lists the
// licences of what it bundles), with its last line, a reference to a source map that is not
// shipped, removed.
const RedocVersion = "2.5.4"

//go:embed redoc.standalone.js
var redocJS []byte

// page renders the document at openapi.json, relative to the page's own path, with the viewer
// at docs/redoc.standalone.js: served at /v2/{partition}/docs, both resolve inside the partition.
var page = []byte(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>credo API reference</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="openapi.json"></redoc>
<script src="docs/redoc.standalone.js"></script>
</body>
</html>
`)

// contentSecurityPolicy lets the page load only its own script and document; Redoc needs inline
// styles, data: images and a worker made from a blob for its search.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; font-src 'self' data:; base-uri 'none'; " +
	"form-action 'none'; frame-ancestors 'none'"

// ServePage answers the reference page.
func ServePage(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	return write(w, "text/html; charset=utf-8", page)
}

// ServeViewer answers the viewer's script.
func ServeViewer(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Cache-Control", "public, max-age=86400")
	return write(w, "text/javascript; charset=utf-8", redocJS)
}

func write(w http.ResponseWriter, contentType string, body []byte) error {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, err := w.Write(body)
	return err
}
