package main

import (
	"context"
	"encoding/json"
	"io"

	"credo/handlers"
	"credo/handlers/security"
	"credo/legacy"
)

// openapi prints the OpenAPI 3.1 document built from the descriptors, the module routes and the
// version-1 routes: the document GET /v2/{partition}/openapi.json serves.
func openapi(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cfg := newConfig()
	fs := newFlags("openapi", "credo openapi [flags]", "Print the OpenAPI 3.1 document of the API that credo serve offers, built from the descriptors.")
	cfg.descriptorFlags(fs.FlagSet)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.args(0, 0); err != nil {
		return err
	}
	if err := cfg.finish(); err != nil {
		return err
	}
	reg, err := cfg.registry()
	if err != nil {
		return err
	}
	srv := &handlers.Server{Registry: reg, Mounted: legacy.Describe()}
	srv.Modules = modules(cfg, new(security.Security), srv.Endpoints)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(srv.OpenAPI())
}
