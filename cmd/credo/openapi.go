package main

import (
	"encoding/json"
	"io"

	"credo/handlers"
	"credo/handlers/security"
)

// openapi prints the OpenAPI 3.1 document built from the descriptors and module routes.
func openapi(args []string, stdout io.Writer) error {
	cfg, _, err := parseConfig("openapi", args, stdout, nil)
	if err != nil {
		return err
	}
	reg, err := cfg.registry()
	if err != nil {
		return err
	}
	srv := &handlers.Server{Registry: reg}
	srv.Modules = modules(cfg, new(security.Security), srv.Endpoints)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(srv.OpenAPI())
}
