package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"credo/handlers"
)

// shutdownGrace is how long SIGTERM waits for in-flight requests.
const shutdownGrace = 15 * time.Second

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, _, err := parseConfig("serve", args, stderr, nil)
	if err != nil {
		return err
	}
	reg, db, err := cfg.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	srv := &handlers.Server{Registry: reg, Database: db}
	if err := wire(ctx, cfg, srv); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	slog.Info("credo serving", "addr", ln.Addr().String(), "database", redact(cfg.Database), "partitions", cfg.Partitions, "v1", cfg.V1Partition)
	fmt.Fprintf(stderr, "credo: serving http://%s/v2/%s/ and /api\n"+
		"To get a token: credo secret create --partition %[2]s --operator (with the same --database), then\n"+
		"  curl -s -X POST http://%[1]s/v2/%[2]s/security/tokens/generate -H 'Content-Type: application/json' -d '{\"Secret\":\"<CLIENT_SECRET>\"}'\n",
		ln.Addr(), cfg.Partitions[0])
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("credo draining")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// redact hides a password in a database URL for logs.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
