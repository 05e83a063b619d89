package main

import (
	"context"

	"credo/handlers"
	"credo/handlers/compliance"
	"credo/handlers/platform"
	"credo/handlers/route"
)

// modules lists the hand-written v2 routes.
func modules(cfg *config) []route.Route {
	var out []route.Route
	out = append(out, platform.Routes(platform.Config{Version: handlers.Version})...)
	out = append(out, compliance.Routes()...)
	_ = cfg
	return out
}

// wire attaches the modules, authentication and the version-1 API to the server.
func wire(ctx context.Context, cfg *config, srv *handlers.Server) error {
	_ = ctx
	srv.Modules = modules(cfg)
	return nil
}
