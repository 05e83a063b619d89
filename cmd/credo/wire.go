package main

import (
	"context"

	"credo/handlers"
	"credo/handlers/route"
)

// modules lists the hand-written v2 routes.
func modules(cfg *config) []route.Route {
	_ = cfg
	return nil
}

// wire attaches the modules, authentication and the version-1 API to the server.
func wire(ctx context.Context, cfg *config, srv *handlers.Server) error {
	_ = ctx
	srv.Modules = modules(cfg)
	return nil
}
