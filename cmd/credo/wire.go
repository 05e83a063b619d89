package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"time"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/handlers"
	"credo/handlers/compliance"
	"credo/handlers/gradebook"
	"credo/handlers/housekeeping"
	"credo/handlers/idempotency"
	"credo/handlers/people"
	"credo/handlers/platform"
	"credo/handlers/route"
	"credo/handlers/security"
	"credo/legacy"
)

// exportCleanupEvery is how often expired gradebook exports are removed.
const exportCleanupEvery = 5 * time.Minute

// modules lists the hand-written v2 routes. sec's routes are listed too; a zero Security
// serves only to describe them (credo openapi).
func modules(cfg *config, sec *security.Security, endpoints func() []handlers.Endpoint) []route.Route {
	var out []route.Route
	out = append(out, platform.Routes(platform.Config{Version: handlers.Version})...)
	out = append(out, sec.Routes(endpoints)...)
	out = append(out, compliance.Routes()...)
	gcfg := gradebook.Config{}
	if cfg.Limits != nil {
		gcfg.Limit = cfg.Limits.Export
	}
	out = append(out, gradebook.Routes(gcfg)...)
	out = append(out, people.Routes()...)
	return out
}

// securityConfig reads the keys of decisions §1 from the environment: CREDO_SIGNING_KEY (at
// least 32 bytes; unset: a random key per partition kept in its database) and CREDO_COOKIE_KEY
// (base64 of 32 bytes; set: cookies are encrypted with AES-GCM). serve reads them before it
// opens a database, so that a malformed key is a usage error, not a failure after migrating.
func securityConfig() (security.Config, error) {
	var c security.Config
	if v := os.Getenv("CREDO_SIGNING_KEY"); v != "" {
		if len(v) < auth.MinKeyBytes {
			return c, fmt.Errorf("CREDO_SIGNING_KEY has %d bytes; at least %d are needed", len(v), auth.MinKeyBytes)
		}
		c.SigningKey = []byte(v)
	}
	if v := os.Getenv("CREDO_COOKIE_KEY"); v != "" {
		key, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(key) != 32 {
			return c, fmt.Errorf("CREDO_COOKIE_KEY must be the base64 of 32 bytes")
		}
		c.CookieEncryptionKey = key
	}
	return c, nil
}

// wire attaches authentication, the modules and the version-1 API to the server, and starts
// the background work that lives as long as ctx.
func wire(ctx context.Context, cfg *config, srv *handlers.Server) error {
	scfg := cfg.Keys
	scfg.Limits = cfg.Limits
	sec, err := security.New(ctx, srv.Database, scfg)
	if err != nil {
		return err
	}
	srv.Auth, srv.Authz, srv.Continuation = sec.Authenticator(), sec.Authorizer(), sec
	srv.Modules = modules(cfg, sec, srv.Endpoints)
	// One keeper for both APIs: an Idempotency-Key is the caller's, whichever API it calls.
	if srv.Idempotency, err = idempotency.New(srv.Registry, idempotency.Config{}); err != nil {
		return err
	}
	v1, _ := srv.Database.Store(cfg.V1Partition)
	srv.Mounted = legacy.Describe()
	srv.Root = func(r *mux.Router) error {
		return legacy.Routes(r, legacy.Deps{Store: v1, Authenticate: sec.LegacyAuthenticator(cfg.V1Partition), Authz: srv.Authz,
			Now: time.Now, Limits: cfg.Limits, Idempotency: srv.Idempotency})
	}
	go housekeeping.Every(ctx, exportCleanupEvery, "gradebook exports", func(ctx context.Context) (int64, error) {
		return gradebook.CleanupAll(ctx, srv.Database, gradebook.Config{})
	})
	go housekeeping.Every(ctx, security.PurgeEvery, "token records", sec.Purge)
	go housekeeping.Every(ctx, idempotency.PurgeEvery, "idempotency keys", func(ctx context.Context) (int64, error) {
		return srv.Idempotency.Purge(ctx, srv.Database)
	})
	return nil
}
