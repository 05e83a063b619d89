package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"credo/engine"
	"credo/handlers"
	"credo/handlers/observe"
	"credo/internal/heapfloor"
)

// heapFloor is how far above the live heap the collector's heap goal stays (internal/heapfloor)
// unless GOGC is set. A serving credo keeps about 3 MiB live, so at GOGC 100 it collected
// every 3 MiB or so of allocation, some 70 times a second under load, and spent about 5% of a
// get's CPU marking (BENCHMARKS.md). A live heap larger than the floor is collected as at
// GOGC 100.
const heapFloor = 8 << 20

const serveDoc = `Serve the API: /v2/{partition}/… for every partition and /api (version 1) for one, with
/livez and /readyz, and /metrics on --admin-addr (docs/operations.md).

Start-up opens and migrates every partition on its database (--database, or the one
--partition-database places it on); a database that does not connect or answer within
--database-timeout stops it with exit status 1, naming the partition and the database. On
PostgreSQL an index that a release adds to an existing table is built concurrently (writes go
on), within --migration-timeout. SIGINT or SIGTERM during start-up cancels in PostgreSQL the
statement credo runs there (an index build, a step of the migration) and exits 0 once
PostgreSQL has stopped it, within 3 s (a wait for another process's migration stops at once);
an index build it interrupts is left INVALID, and the next start-up drops it and builds it
again. If PostgreSQL does not confirm the cancel in that time, the statement (a build or a
step) may still run there: credo says so and exits 3.

SIGINT or SIGTERM while serving turns /readyz 503, waits --shutdown-delay, stops accepting
connections, lets in-flight requests finish, closes the database connections, and exits 0.
Requests still running after --shutdown-timeout, or at a second SIGINT or SIGTERM, are
abandoned: credo logs it and exits 3.
Statements end within --database-timeout (keep it below --shutdown-timeout), so a database that
does not answer fails its requests (503) and does not hold the shutdown.`

func serve(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	cfg := newConfig()
	fs := newFlags("serve", "credo serve [flags]", serveDoc)
	cfg.servingFlags(fs.FlagSet)
	cfg.databaseFlags(fs.FlagSet)
	cfg.poolFlags(fs.FlagSet)
	cfg.descriptorFlags(fs.FlagSet)
	var ops opsConfig
	check := ops.bind(fs.FlagSet)
	limits := limitFlags(fs.FlagSet)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.args(0, 0); err != nil {
		return err
	}
	if err := check(); err != nil {
		return fs.usage("%v", err)
	}
	if err := checkListenAddr("addr", cfg.Addr); err != nil {
		return fs.usage("%v", err)
	}
	var err error
	if cfg.Limits, err = limits(); err != nil {
		return fs.usage("%v", err)
	}
	if err := cfg.finish(); err != nil {
		return err
	}
	if cfg.Keys, err = securityConfig(); err != nil {
		return fs.usage("%v", err)
	}
	out := newLogBuffer(stderr, logFlushEvery)
	defer out.Close()
	stderr = out
	logger, _ := ops.logger(out)
	logger = slog.New(flushingHandler{Handler: logger.Handler(), level: slog.LevelWarn, buf: out})
	slog.SetDefault(logger)
	// Nothing listens until every partition is migrated (a first start-up of a release may
	// build indexes on large tables): the log says that start-up is under way, and then how
	// long it took.
	started := time.Now()
	slog.Info("credo starting: opening and migrating the partitions", "database", engine.Redact(cfg.Database),
		"partitions", cfg.Partitions, "placed", cfg.Placed.String())
	reg, db, err := cfg.open(ctx)
	if err != nil {
		return startupError(ctx, stderr, err)
	}
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(), observe.NewPoolCollector(db.Stats))
	srv := &handlers.Server{Registry: reg, Database: db, CORSOrigins: ops.CORSOrigins,
		Observer: observe.New(observe.Options{Logger: logger, Registerer: metrics, ClientAddress: cfg.Limits.Clients.Address,
			// The access lines skip slog's handler, in its format, into the same buffer.
			Access: &observe.AccessOutput{W: out, JSON: ops.LogFormat == "json"}})}
	// The background work (housekeeping) stops before the database closes on a failed
	// start-up: otherwise each clean-up logs its failure on the closed database, a misleading
	// error beside the real one (an address in use).
	work, stopWork := context.WithCancel(ctx)
	defer stopWork()
	closeDB := func() {
		stopWork()
		db.Close()
	}
	if err := wire(work, cfg, srv); err != nil {
		closeDB()
		return startupError(ctx, stderr, err)
	}
	// The server fails closed: without its authenticator, authorizer or a write check a
	// descriptor names, it is a start-up error, never an open door.
	h, err := srv.Handler()
	if err != nil {
		closeDB()
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		closeDB()
		return fmt.Errorf("listen: %w", err)
	}
	hs := ops.httpServer(h)
	admin, err := ops.serveAdmin(metrics)
	if err != nil {
		ln.Close()
		closeDB()
		return err
	}
	gc := "GOGC from the environment"
	if f := heapfloor.Start(heapFloor); f != nil {
		defer f.Stop()
		gc = fmt.Sprintf("heap floor %d MiB", heapFloor>>20)
	}
	slog.Info("credo serving", "addr", ln.Addr().String(), "database", engine.Redact(cfg.Database), "partitions", cfg.Partitions,
		"placed", cfg.Placed.String(), "v1", cfg.V1Partition,
		"database_timeout", cfg.DB.Timeout.String(), "database_max_conns", db.Limits().MaxConns, "gc", gc,
		"startup", time.Since(started).Round(time.Millisecond).String())
	fmt.Fprintf(stderr, "credo: serving http://%s/v2/%s/ and /api\n"+
		"To get a token: %[3]s secret create --partition %[2]s --operator (with the same --database and --partition-database flags), then\n"+
		"  curl -s -X POST http://%[1]s/v2/%[2]s/security/tokens/generate -H 'Content-Type: application/json' -d '{\"Secret\":\"<CLIENT_SECRET>\"}'\n",
		ln.Addr(), cfg.Partitions[0], invokedAs())
	out.Flush()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		closeDB()
		return err
	case <-ctx.Done():
	}
	// A second SIGINT or SIGTERM during the drain (an operator pressing Ctrl-C again, or an
	// orchestrator that will not wait) ends it at once: the requests in flight are cut off.
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	drained := make(chan error, 1)
	go func() { drained <- ops.drain(srv, hs, admin, errc, db) }()
	select {
	case err := <-drained:
		return err
	case sig := <-again:
		slog.Error("shutdown: a second signal; abandoning the requests in flight", "signal", sig.String())
		hs.Close()
		return &codeError{code: exitDrainIncomplete, err: fmt.Errorf("shutdown: interrupted by a second %s", sig)}
	}
}

// startupError reports a start-up that failed. A signal that interrupted it is a clean exit
// (status 0), as a signal while serving is: the supervisor asked the process to stop, and it
// stopped, leaving nothing running in PostgreSQL (a migration's statements are cancelled there,
// see engine.Migrate). When PostgreSQL did not confirm that it stopped a statement
// (engine.ErrLeftRunning), the stop is incomplete, as a drain that ran out of time: status 3.
func startupError(ctx context.Context, stderr io.Writer, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if errors.Is(err, engine.ErrLeftRunning) {
		return &codeError{code: exitDrainIncomplete, err: fmt.Errorf("interrupted during start-up: %w", err)}
	}
	slog.Warn("credo serve: interrupted during start-up; what it ran in the database is stopped", "stopped", err.Error())
	fmt.Fprintln(stderr, "credo serve: interrupted during start-up; exiting")
	return nil
}

// drain is the shutdown sequence of SIGTERM: /readyz answers 503 at once; after
// --shutdown-delay (for load balancers to notice) the listener closes and the in-flight
// requests get --shutdown-timeout to finish; then the admin listener closes, and the database
// connections with the time left. Requests still running at the deadline are abandoned and the
// error carries exit status 3. Connections that do not close in time (a database that does not
// answer) are only logged: the requests were served, and the process's exit closes the sockets.
func (o *opsConfig) drain(srv *handlers.Server, hs, admin *http.Server, errc <-chan error, db *engine.Database) error {
	srv.Drain()
	slog.Info("credo draining", "delay", o.ShutdownDelay, "timeout", o.ShutdownTimeout)
	time.Sleep(o.ShutdownDelay)
	ctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
	defer cancel()
	var incomplete error
	if err := hs.Shutdown(ctx); err != nil {
		n := srv.Observer.InFlight()
		what := "in-flight requests" // connections still reading a request, not yet counted
		if n > 0 {
			what = fmt.Sprintf("%d requests", n)
			if n == 1 {
				what = "1 request"
			}
		}
		incomplete = fmt.Errorf("shutdown: %s did not finish within %s: %w", what, o.ShutdownTimeout, err)
		slog.Error("shutdown: in-flight requests did not finish in time; abandoning them", "requests", n, "timeout", o.ShutdownTimeout, "err", err)
		hs.Close()
		// Closing their connections ends the requests that were writing their answers at once:
		// a moment lets them write their access lines (aborted=true). Those waiting for the
		// database are not waited for.
		for end := time.Now().Add(abandonGrace); srv.Observer.InFlight() > 0 && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if admin != nil {
		_ = admin.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		slog.Error("shutdown: server", "err", err)
	}
	closeBy, timeout := ctx, o.ShutdownTimeout
	if incomplete != nil {
		if srv.Observer.InFlight() > 0 {
			// The abandoned requests still hold database connections, and a pool's Close waits
			// for them: the process's exit closes them (SQLite recovers its WAL at the next
			// open, and PostgreSQL rolls back what they had begun).
			slog.Warn("shutdown: the database connections are left to the exit; the abandoned requests hold some")
			return &codeError{code: exitDrainIncomplete, err: incomplete}
		}
		var cancel context.CancelFunc
		closeBy, cancel = context.WithTimeout(context.Background(), abandonGrace)
		defer cancel()
		timeout = abandonGrace
	}
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			slog.Warn("shutdown: closing the database connections", "err", err)
		}
	case <-closeBy.Done():
		slog.Warn("shutdown: the database connections did not close in time", "timeout", timeout)
	}
	if incomplete != nil {
		return &codeError{code: exitDrainIncomplete, err: incomplete}
	}
	slog.Info("credo stopped")
	return nil
}

// abandonGrace is how long a drain that ran out of time waits, after closing the connections,
// for the requests they cut off to return and log.
const abandonGrace = 500 * time.Millisecond

// adminWriteTimeout bounds an admin answer (a scrape); net/http/pprof moves it for a profile
// or a trace of any length.
const adminWriteTimeout = 2 * time.Minute

// serveAdmin starts the admin listener (metrics and profiles) when --admin-addr is set.
func (o *opsConfig) serveAdmin(g prometheus.Gatherer) (*http.Server, error) {
	if o.AdminAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", o.AdminAddr)
	if err != nil {
		return nil, fmt.Errorf("admin listen: %w", err)
	}
	hs := &http.Server{Handler: observe.AdminHandler(g), ReadHeaderTimeout: o.ReadHeaderTimeout,
		WriteTimeout: adminWriteTimeout, IdleTimeout: o.IdleTimeout, MaxHeaderBytes: o.MaxHeaderBytes,
		ErrorLog: slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn)}
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		slog.Warn("the admin listener is not on a loopback address: metrics and profiles are open to whoever reaches it", "addr", ln.Addr().String())
	}
	slog.Info("credo admin listening", "addr", ln.Addr().String())
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("admin listener failed", "err", err)
		}
	}()
	return hs, nil
}
