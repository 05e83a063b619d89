package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// opsConfig holds serve's operability settings (docs/operations.md): logs, the admin listener,
// CORS, HTTP timeouts and shutdown. Each flag has a CREDO_* twin; a malformed value in either is
// a usage error, never a silent default.
type opsConfig struct {
	LogFormat, LogLevel string
	AdminAddr           string
	CORSOrigins         []string
	ShutdownTimeout     time.Duration
	ShutdownDelay       time.Duration
	ReadHeaderTimeout   time.Duration
	ReadTimeout         time.Duration
	WriteTimeout        time.Duration
	IdleTimeout         time.Duration
	MaxHeaderBytes      int
}

// bind declares the flags on fs; the returned function checks them after parsing.
func (o *opsConfig) bind(fs *flag.FlagSet) func() error {
	fs.StringVar(&o.LogFormat, "log-format", env("CREDO_LOG_FORMAT", "text"), "log format: text or json (CREDO_LOG_FORMAT)")
	fs.StringVar(&o.LogLevel, "log-level", env("CREDO_LOG_LEVEL", "info"), "log level: debug, info, warn or error (CREDO_LOG_LEVEL)")
	fs.StringVar(&o.AdminAddr, "admin-addr", env("CREDO_ADMIN_ADDR", ""), "address of the admin listener serving /metrics and /debug/pprof/; empty: off (CREDO_ADMIN_ADDR)")
	cors := fs.String("cors-origins", env("CREDO_CORS_ORIGINS", ""), "comma-separated origins allowed to call from browsers; empty: no CORS (CREDO_CORS_ORIGINS)")
	durations := []struct {
		p          *time.Duration
		name, env  string
		def, least time.Duration
		usage      string
	}{
		{&o.ShutdownTimeout, "shutdown-timeout", "CREDO_SHUTDOWN_TIMEOUT", 15 * time.Second, minTimeout, "how long SIGTERM waits for in-flight requests"},
		{&o.ShutdownDelay, "shutdown-delay", "CREDO_SHUTDOWN_DELAY", 0, 0, "how long /readyz answers 503 before the listener closes on SIGTERM; 0: it closes at once"},
		{&o.ReadHeaderTimeout, "read-header-timeout", "CREDO_READ_HEADER_TIMEOUT", 10 * time.Second, minTimeout, "time allowed to read a request's header"},
		{&o.ReadTimeout, "read-timeout", "CREDO_READ_TIMEOUT", time.Minute, minTimeout, "time allowed to read a whole request (an upload that keeps moving gets more)"},
		{&o.WriteTimeout, "write-timeout", "CREDO_WRITE_TIMEOUT", time.Minute, minTimeout, "time allowed from a request's header to the end of its answer (a stream that keeps moving gets more)"},
		{&o.IdleTimeout, "idle-timeout", "CREDO_IDLE_TIMEOUT", 2 * time.Minute, minTimeout, "how long an idle keep-alive connection stays open"},
	}
	raw := make([]*string, len(durations))
	for i, d := range durations {
		usage := d.usage
		if d.least > 0 {
			usage += "; at least " + d.least.String()
		}
		raw[i] = fs.String(d.name, env(d.env, d.def.String()), usage+" ("+d.env+")")
	}
	maxHeader := fs.String("max-header-bytes", env("CREDO_MAX_HEADER_BYTES", strconv.Itoa(defaultMaxHeaderBytes)), "largest request header accepted (CREDO_MAX_HEADER_BYTES)")
	return func() error {
		var errs []error
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for i, d := range durations {
			if err := setDuration(d.p, *raw[i], d.least); err != nil {
				errs = append(errs, fmt.Errorf("%s %v", setting(set, d.name, d.env, *raw[i]), err))
			}
		}
		n, err := strconv.Atoi(*maxHeader)
		if err != nil || n < 4096 || n > 1<<20 {
			errs = append(errs, fmt.Errorf("%s must be a number of bytes from 4096 to 1048576", setting(set, "max-header-bytes", "CREDO_MAX_HEADER_BYTES", *maxHeader)))
		}
		o.MaxHeaderBytes = n
		for _, c := range strings.Split(*cors, ",") {
			if c = strings.TrimSpace(c); c != "" {
				o.CORSOrigins = append(o.CORSOrigins, c)
			}
		}
		if _, err := o.logger(io.Discard); err != nil {
			errs = append(errs, err)
		}
		if o.AdminAddr != "" {
			if err := checkListenAddr("admin-addr", o.AdminAddr); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
}

// setting names a setting and its value as the operator gave it, for a usage error: the flag
// when the command line set it (set, from FlagSet.Visit), else its CREDO_* twin.
func setting(set map[string]bool, flag, env, v string) string {
	if set[flag] {
		return fmt.Sprintf("--%s %q", flag, v)
	}
	return fmt.Sprintf("%s=%q", env, v)
}

// checkListenAddr checks that a listen address parses as net.Listen reads it (HOST:PORT, the
// host optional, the port a number up to 65535 or a service name), so that a mistyped address
// is a usage error found before any database is opened or migrated, not a failure after.
func checkListenAddr(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf("--%s %q is not a listen address such as 127.0.0.1:8080 or :8080: %v", flag, addr, err)
	}
	return nil
}

// defaultMaxHeaderBytes bounds request headers: room for a bearer token, a session cookie and
// the usual browser headers many times over, a sixteenth of net/http's default.
const defaultMaxHeaderBytes = 64 << 10

// logger returns the logger the flags describe, writing to w.
func (o *opsConfig) logger(w io.Writer) (*slog.Logger, error) {
	level, ok := logLevels[o.LogLevel]
	if !ok {
		return nil, fmt.Errorf("--log-level %q must be debug, info, warn or error", o.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch o.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q must be text or json", o.LogFormat)
}

var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// httpServer returns the server of the API with the configured timeouts and limits. Its own
// error lines (a failed TLS handshake, a malformed request) go to the log as warnings.
func (o *opsConfig) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
}
