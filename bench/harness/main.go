// Command harness seeds the benchmark partitions, starts `credo serve` and the reference
// server bench/ref on the same data, drives both over loopback with the cases of issue 6 and
// prints the table of BENCHMARKS.md. Run it through `make bench`.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"credo/bench/load"
	"credo/engine"
	// The engine's drivers and validator: the harness seeds both stores.
	_ "credo/engine/postgres"
	_ "credo/engine/sqlite"
	_ "credo/engine/validator"
)

// config is the harness's flags.
type config struct {
	credo, ref         string
	postgres, sqlite   string
	credoAddr, refAddr string
	conns              int
	duration, warmup   time.Duration
	quick, large       bool
	// rounds splits each case's measured time into rounds that alternate between credo and
	// the reference server, so that load from elsewhere on the machine hits both alike.
	rounds    int
	growth    bool
	exports   int
	cases     []string
	work, out string
	// profile, when set, is the folder for CPU profiles of credo (one per case).
	profile string
}

// pprofAddr is where a profiling build of credo serves net/http/pprof.
const pprofAddr = "127.0.0.1:18090"

// The partitions: the main one and the growth check's.
const (
	mainPartition  = "bench"
	smallPartition = "bench10k"
	largePartition = "bench1m"
)

func datasets(large bool) (main dataset, growth []dataset) {
	main = dataset{Partition: mainPartition, Comments: 100_000, Users: 1_000, People: 100_000, Gradebooks: 100_000}
	growth = []dataset{{Partition: smallPartition, Comments: 10_000, Users: 100}}
	if large {
		growth = append(growth, dataset{Partition: largePartition, Comments: 1_000_000, Users: 10_000})
	}
	return main, growth
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	cfg := &config{}
	var cases string
	flag.StringVar(&cfg.credo, "credo", "bin/credo", "credo binary")
	flag.StringVar(&cfg.ref, "ref", "bin/credo-ref", "reference server binary (bench/ref)")
	flag.StringVar(&cfg.postgres, "postgres", "postgres://credo:credo@127.0.0.1:5432/credo?sslmode=disable", "PostgreSQL URL (empty: skip PostgreSQL)")
	flag.StringVar(&cfg.sqlite, "sqlite", "", "SQLite data folder (default: <work>/sqlite; \"off\": skip SQLite)")
	flag.StringVar(&cfg.credoAddr, "credo-addr", "127.0.0.1:18080", "where credo listens (loopback)")
	flag.StringVar(&cfg.refAddr, "ref-addr", "127.0.0.1:18081", "where the reference server listens (loopback)")
	flag.IntVar(&cfg.conns, "conns", 32, "connections per case")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "measured time per case")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "warm-up per case, not measured")
	flag.BoolVar(&cfg.quick, "quick", false, "quick mode: 2s per case after 0.5s warm-up, one export run")
	flag.BoolVar(&cfg.large, "large", false, "also seed and measure the 1,000,000-comment partition for the growth check")
	flag.BoolVar(&cfg.growth, "growth", true, "run the growth check (W1, W2 at 10,000 and 100,000 or 1,000,000 comments)")
	flag.IntVar(&cfg.rounds, "rounds", 5, "alternating credo/ref rounds per case (the duration is split between them)")
	flag.IntVar(&cfg.exports, "exports", 3, "W5 runs per server (the median is reported)")
	flag.StringVar(&cases, "cases", "W1,W2,W3,W4,W5,W6,L1", "cases to run")
	flag.StringVar(&cfg.work, "work", filepath.Join(os.TempDir(), "credo-bench"), "folder for SQLite files and server logs")
	flag.StringVar(&cfg.out, "out", "", "also write the report (Markdown) to this file")
	flag.StringVar(&cfg.profile, "profile", "", "build credo with net/http/pprof (go build -overlay) and save a CPU profile per case in this folder")
	reseed := flag.Bool("reseed", false, "drop the bench partitions' data first (SQLite files; PostgreSQL schemas)")
	flag.Parse()
	if cfg.quick {
		cfg.duration, cfg.warmup, cfg.exports, cfg.rounds = 2*time.Second, 500*time.Millisecond, 1, 2
	}
	cfg.rounds = max(1, cfg.rounds)
	cfg.cases = strings.Split(cases, ",")
	if cfg.sqlite == "" {
		cfg.sqlite = filepath.Join(cfg.work, "sqlite")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, *reseed); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cfg *config, reseed bool) error {
	if err := os.MkdirAll(cfg.work, 0o750); err != nil {
		return err
	}
	var out io.Writer = os.Stdout
	if cfg.out != "" {
		f, err := os.Create(cfg.out)
		if err != nil {
			return err
		}
		defer f.Close()
		out = io.MultiWriter(os.Stdout, f)
	}
	reg, err := registry()
	if err != nil {
		return err
	}
	if cfg.profile != "" {
		if err := os.MkdirAll(cfg.profile, 0o750); err != nil {
			return err
		}
		if cfg.credo, err = profileBinary(cfg.work); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "## Run of %s\n\nMachine: %d CPUs (GOMAXPROCS %d), %s, %s/%s.\n", time.Now().UTC().Format("2006-01-02 15:04 MST"),
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	var backends []string
	if cfg.postgres != "" {
		backends = append(backends, cfg.postgres)
	}
	if cfg.sqlite != "off" {
		backends = append(backends, "sqlite:"+cfg.sqlite)
	}
	for _, dbURL := range backends {
		if reseed {
			if err := drop(ctx, dbURL); err != nil {
				return err
			}
		}
		if err := runBackend(ctx, cfg, reg, dbURL, out); err != nil {
			return err
		}
	}
	return nil
}

func backendName(dbURL string) string {
	if strings.HasPrefix(dbURL, "sqlite:") {
		return "sqlite"
	}
	return "postgres"
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func runBackend(ctx context.Context, cfg *config, reg *engine.Registry, dbURL string, out io.Writer) error {
	backend := backendName(dbURL)
	logf := func(format string, args ...any) { log.Printf(backend+": "+format, args...) }
	mainSet, growthSets := datasets(cfg.large)
	if !cfg.growth {
		growthSets = nil
	}
	var parts []string
	for _, d := range append([]dataset{mainSet}, growthSets...) {
		// W4 rows of an interrupted run would skew counts: remove them before anything else.
		if _, err := deleteW4(ctx, dbURL, reg, d.Partition); err != nil {
			return err
		}
		if err := seed(ctx, dbURL, reg, d, logf); err != nil {
			return err
		}
		parts = append(parts, d.Partition)
	}
	works := map[string]*workload{}
	for _, p := range parts {
		w, err := readWorkload(ctx, dbURL, reg, p)
		if err != nil {
			return err
		}
		works[p] = w
	}
	partitions := strings.Join(parts, ",")
	prof := profiler{dir: cfg.profile}
	if cfg.profile != "" {
		prof.addr = pprofAddr
	}
	credo, err := start("credo", cfg.credoAddr, filepath.Join(cfg.work, "credo-"+backend+".log"), "/v2/"+mainPartition+"/platform/health",
		[]string{"CREDO_BENCH_PPROF=" + prof.addr}, cfg.credo, "serve", "--addr", cfg.credoAddr, "--database", dbURL, "--partitions", partitions)
	if err != nil {
		return err
	}
	defer credo.stop()
	logf("credo started in %v", credo.Startup.Round(time.Millisecond))
	ref, err := start("ref", cfg.refAddr, filepath.Join(cfg.work, "ref-"+backend+".log"), "/v2/"+mainPartition+"/platform/health",
		nil, cfg.ref, "--addr", cfg.refAddr, "--database", dbURL, "--partitions", partitions)
	if err != nil {
		return err
	}
	defer ref.stop()
	logf("ref started in %v", ref.Startup.Round(time.Millisecond))
	// A token belongs to one partition: each partition gets its own operator.
	credoTargets := map[string]target{}
	auth := false
	for _, p := range parts {
		tok, err := token(cfg.credo, dbURL, partitions, p, cfg.credoAddr)
		if err != nil {
			return fmt.Errorf("%s: token for %s: %w", backend, p, err)
		}
		t := target{addr: cfg.credoAddr, header: []string{"Accept: application/json"}}
		if tok != "" {
			t.header = append(t.header, "Authorization: Bearer "+tok)
			auth = true
		}
		credoTargets[p] = t
	}
	ct := credoTargets[mainPartition]
	// The reference server is sent the very requests credo is, the credential included (it
	// ignores it): both servers read the same bytes, and only credo's work on them differs.
	refTarget := func(p string) target { return target{addr: cfg.refAddr, header: credoTargets[p].header} }
	rt := refTarget(mainPartition)
	s := summary{Backend: backend, Auth: auth, CredoStartup: credo.Startup, RefStartup: ref.Startup}

	// round runs one round of a case on t: the warm-up only in the first round. It also
	// returns the CPU time the server, the load driver and the database backends used in a
	// round without warm-up.
	other := others{}
	if backend == "postgres" {
		other.dbURL = dbURL
	}
	round := func(name string, t target, p string, i int) (load.Result, cpuUse, error) {
		c := loadCase(name, t, p, works[p], cfg)
		c.Duration = cfg.duration / time.Duration(cfg.rounds)
		if i > 0 {
			c.Warmup = 0
		}
		wait := func() error { return nil }
		pid := ref.pid()
		if t.addr == cfg.credoAddr {
			pid = credo.pid()
			wait = prof.during(fmt.Sprintf("credo-%s-%s-%s-%d", backend, name, p, i), c.Warmup+c.Duration)
		}
		var m0 cpuMark
		if c.Warmup == 0 {
			m0 = other.begin(ctx)
		}
		cpu0, cerr := load.ReadCPU(pid)
		res, err := load.Run(ctx, c)
		cpu1, cerr1 := load.ReadCPU(pid)
		if perr := wait(); err == nil && perr != nil {
			err = fmt.Errorf("profile: %w", perr)
		}
		if err == nil && cerr == nil {
			err = cerr1
		} else if err == nil {
			err = cerr
		}
		if c.Warmup > 0 {
			return res, cpuUse{}, err
		}
		use := cpuUse{server: cpu1 - cpu0}
		use.driver, use.database = since(m0, other.end(ctx))
		return res, use, err
	}
	// measureEach runs a case on credo and on the reference server in alternating rounds, on
	// each of parts in the same rounds: round i runs every partition (credo, then ref) before
	// round i+1, so that the machine's drift over the minutes it takes hits every partition
	// alike, as alternating hits credo and ref alike.
	measureEach := func(name string, parts []string) ([]pair, error) {
		cs := make([][]load.Result, len(parts))
		rs := make([][]load.Result, len(parts))
		cpu := make([][2]cpuUse, len(parts)) // credo, ref: in rounds without warm-up
		served := make([][2]int64, len(parts))
		for i := 0; i < cfg.rounds; i++ {
			for j, p := range parts {
				c, ccpu, err := round(name, credoTargets[p], p, i)
				if err != nil {
					return nil, err
				}
				r, rcpu, err := round(name, refTarget(p), p, i)
				if err != nil {
					return nil, err
				}
				cs[j], rs[j] = append(cs[j], c), append(rs[j], r)
				if ccpu.server > 0 && rcpu.server > 0 {
					cpu[j][0], cpu[j][1] = cpu[j][0].add(ccpu), cpu[j][1].add(rcpu)
					served[j][0], served[j][1] = served[j][0]+c.Requests, served[j][1]+r.Requests
				}
			}
		}
		out := make([]pair, len(parts))
		for j, p := range parts {
			out[j] = pair{Case: name, Credo: load.Merge(cs[j]...), Ref: load.Merge(rs[j]...)}
			if served[j][0] > 0 && served[j][1] > 0 {
				out[j].CredoCPU, out[j].RefCPU = cpu[j][0].per(served[j][0]), cpu[j][1].per(served[j][1])
			}
			for _, x := range []struct {
				who string
				res load.Result
			}{{"credo", out[j].Credo}, {"ref", out[j].Ref}} {
				logf("%s %s on %s: %.0f req/s, p50 %s ms, p99 %s ms, %d errors", name, p, x.who, x.res.RPS, ms(x.res.P50), ms(x.res.P99), x.res.Errors)
			}
			if name == "W4" {
				if _, err := deleteW4(ctx, dbURL, reg, p); err != nil {
					return out, err
				}
			}
		}
		return out, nil
	}
	measure := func(name, p string) (pair, error) {
		out, err := measureEach(name, []string{p})
		if err != nil {
			return pair{}, err
		}
		return out[0], nil
	}
	var pairs []pair
	for _, name := range []string{"W1", "W2", "W3", "W4"} {
		if !has(cfg.cases, name) {
			continue
		}
		pr, err := measure(name, mainPartition)
		if err != nil {
			return err
		}
		pairs = append(pairs, pr)
	}
	var w6 []w6Result
	if has(cfg.cases, "W6") {
		tok, err := w6Token(ct, mainPartition)
		if err != nil {
			return err
		}
		// The three requests in alternating rounds, so that noise from elsewhere hits each alike.
		res := make([][]load.Result, len(w6Cases))
		for i := 0; i < cfg.rounds; i++ {
			for j := range w6Cases {
				c := w6Case(j, ct, mainPartition, tok, cfg)
				c.Duration = cfg.duration / time.Duration(cfg.rounds)
				if i > 0 {
					c.Warmup = 0
				}
				r, err := load.Run(ctx, c)
				if err != nil {
					return err
				}
				res[j] = append(res[j], r)
			}
		}
		for j, name := range w6Cases {
			m := load.Merge(res[j]...)
			w6 = append(w6, w6Result{Case: name, Res: m})
			logf("%s on credo: %.0f req/s, p50 %s ms, p99 %s ms, %d errors", name, m.RPS, ms(m.P50), ms(m.P99), m.Errors)
		}
	}
	if has(cfg.cases, "W5") {
		mode, err := exportMode(ct, mainPartition)
		if err != nil {
			return err
		}
		for i, sv := range []struct {
			t   target
			pid int
		}{{ct, credo.pid()}, {rt, ref.pid()}} {
			smp := load.Sample(sv.pid, 5*time.Millisecond)
			res, err := runExport(sv.t, mainPartition, cfg.exports, mode, mainSet.Gradebooks)
			res.PeakRSS = smp.Stop()
			if err != nil {
				return fmt.Errorf("W5: %w", err)
			}
			s.Export[i] = res
			logf("W5 (%s) on %s: median %s ms, %d bytes, peak RSS %s MiB", mode, sv.t.addr, ms(res.Median), res.Bytes, mib(res.PeakRSS))
		}
		s.ExportRows = mainSet.Gradebooks
	}
	if has(cfg.cases, "L1") {
		if s.Bulk, err = runBulk(ctx, cfg, reg, dbURL, logf); err != nil {
			return err
		}
	}
	var growth []growthRow
	if len(growthSets) > 0 {
		sizes := []dataset{growthSets[0], mainSet}
		if cfg.large {
			sizes = []dataset{growthSets[0], mainSet, growthSets[1]}
		}
		parts := make([]string, len(sizes))
		for i, d := range sizes {
			parts[i] = d.Partition
		}
		// Every size in the same rounds: the sizes' rates are compared with each other.
		w1, err := measureEach("W1", parts)
		if err != nil {
			return err
		}
		w2, err := measureEach("W2", parts)
		if err != nil {
			return err
		}
		for i, d := range sizes {
			growth = append(growth, growthRow{Rows: d.Comments, Partition: d.Partition,
				W1: w1[i].Credo.RPS, RefW1: w1[i].Ref.RPS, W2: w2[i].Credo.RPS, RefW2: w2[i].Ref.RPS})
		}
	}
	if s.CredoMem, err = load.ReadMemory(credo.pid()); err != nil {
		return err
	}
	if s.RefMem, err = load.ReadMemory(ref.pid()); err != nil {
		return err
	}
	writeBackend(out, s, pairs, growth, cfg)
	writeW6(out, w6)
	return nil
}

// drop removes the bench partitions' data: SQLite files, or PostgreSQL schemas.
func drop(ctx context.Context, dbURL string) error {
	return dropPartitions(ctx, dbURL, []string{mainPartition, smallPartition, largePartition, bulkPartition, bulkRefPartition})
}
