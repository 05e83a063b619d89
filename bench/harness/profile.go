package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"credo/bench/load"
)

// profileBinary builds credo with the pprof overlay (overlay/pprof.go.txt added to cmd/credo
// through `go build -overlay`, so that credo's sources stay as they are) into work.
func profileBinary(work string) (string, error) {
	src, err := filepath.Abs(filepath.Join("bench", "harness", "overlay", "pprof.go.txt"))
	if err != nil {
		return "", err
	}
	dst, err := filepath.Abs(filepath.Join("cmd", "credo", "zz_bench_pprof.go"))
	if err != nil {
		return "", err
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{dst: src}})
	ov := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(work, "credo-pprof")
	cmd := exec.Command("go", "build", "-overlay", ov, "-o", bin, "./cmd/credo")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build credo with pprof (run from the module root): %w", err)
	}
	return bin, nil
}

// profiler fetches a CPU profile from credo's pprof address while a case runs.
type profiler struct {
	addr string // "" when not profiling
	dir  string
}

// during starts a CPU profile of seconds and returns a function that waits for it and saves
// it as dir/name.pprof.
func (p profiler) during(name string, d time.Duration) func() error {
	if p.addr == "" {
		return func() error { return nil }
	}
	type result struct {
		status int
		body   []byte
		err    error
	}
	done := make(chan result, 1)
	go func() {
		secs := max(1, int(d.Seconds()))
		status, body, err := load.Once(p.addr, load.Request{Method: "GET", Target: fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs)}, d+30*time.Second)
		done <- result{status, body, err}
	}()
	return func() error {
		r := <-done
		if r.err != nil {
			return r.err
		}
		if r.status != http.StatusOK {
			return fmt.Errorf("pprof answered %d: %s", r.status, r.body)
		}
		return os.WriteFile(filepath.Join(p.dir, name+".pprof"), r.body, 0o644)
	}
}
