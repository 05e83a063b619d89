package main

import (
	"context"
	"time"

	"credo/handlers"
	"credo/handlers/compliance"
	"credo/handlers/gradebook"
	"credo/handlers/people"
	"credo/handlers/platform"
	"credo/handlers/route"
)

// exportCleanupEvery is how often expired gradebook exports are removed.
const exportCleanupEvery = 5 * time.Minute

// modules lists the hand-written v2 routes.
func modules(cfg *config) []route.Route {
	var out []route.Route
	out = append(out, platform.Routes(platform.Config{Version: handlers.Version})...)
	out = append(out, compliance.Routes()...)
	out = append(out, gradebook.Routes(gradebook.Config{Dir: cfg.ExportDir})...)
	out = append(out, people.Routes()...)
	return out
}

// wire attaches the modules, authentication and the version-1 API to the server, and starts
// the background work that lives as long as ctx.
func wire(ctx context.Context, cfg *config, srv *handlers.Server) error {
	srv.Modules = modules(cfg)
	go gradebook.RunCleanup(ctx, srv.Database, gradebook.Config{Dir: cfg.ExportDir}, exportCleanupEvery)
	return nil
}
