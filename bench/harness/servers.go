package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"credo/bench/load"
)

// server is a running server process under test.
type server struct {
	name    string
	addr    string
	cmd     *exec.Cmd
	log     *os.File
	exited  chan error
	Startup time.Duration
}

// startTimeout bounds how long a server may take to answer its first request.
const startTimeout = 60 * time.Second

// start runs a server and waits until probe answers 200; Startup is the time from the start
// of the process to that first served request.
func start(name, addr, logPath, probe string, env []string, bin string, args ...string) (*server, error) {
	if err := load.CheckLoopback(addr); err != nil {
		return nil, err
	}
	if status, _, err := load.Once(addr, load.Request{Method: "GET", Target: probe}, time.Second); err == nil {
		return nil, fmt.Errorf("%s: something already answers on %s (status %d); stop it or pick another address", name, addr, status)
	}
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = lf, lf
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &server{name: name, addr: addr, cmd: cmd, log: lf, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	for {
		status, _, err := load.Once(addr, load.Request{Method: "GET", Target: probe}, 5*time.Second)
		if err == nil && status == http.StatusOK {
			s.Startup = time.Since(t0)
			return s, nil
		}
		select {
		case err := <-s.exited:
			lf.Close()
			return nil, fmt.Errorf("%s exited before serving (%v); see %s", name, err, logPath)
		case <-time.After(2 * time.Millisecond):
		}
		if time.Since(t0) > startTimeout {
			s.stop()
			return nil, fmt.Errorf("%s did not answer %s within %v; see %s", name, probe, startTimeout, logPath)
		}
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop sends SIGTERM and waits for the drain, killing the process if it does not end.
func (s *server) stop() {
	defer s.log.Close()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// token returns a bearer token for an operator of partition when the server requires one, and
// "" when it serves v2 routes without one (before authentication is wired).
func token(credoBin, dbURL, partitions, partition, addr string) (string, error) {
	status, _, err := load.Once(addr, load.Request{Method: "GET", Target: "/v2/" + partition + "/security/users-comments/count"}, 10*time.Second)
	if err != nil {
		return "", err
	}
	switch status {
	case http.StatusOK:
		return "", nil
	case http.StatusUnauthorized:
	default:
		return "", fmt.Errorf("probe without a token answered %d, want 200 or 401", status)
	}
	// credo secret takes the configured partitions from the environment only.
	cmd := exec.Command(credoBin, "secret", "create", "--database", dbURL,
		"--partition", partition, "--operator", "--email", "bench@example.com", "--json")
	cmd.Env = append(os.Environ(), "CREDO_PARTITIONS="+partitions)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("credo secret create: %v: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("credo secret create: %w", err)
	}
	var sec struct{ Secret string }
	if err := json.Unmarshal(out, &sec); err != nil || sec.Secret == "" {
		return "", fmt.Errorf("credo secret create printed %q, want {\"Secret\":…}", strings.TrimSpace(string(out)))
	}
	body, _ := json.Marshal(map[string]any{"Secret": sec.Secret, "Lifetime": 3600})
	status, resp, err := load.Once(addr, load.Request{Method: "POST", Target: "/v2/" + partition + "/security/tokens/generate",
		Header: []string{"Content-Type: application/json"}, Body: body}, 10*time.Second)
	if err != nil {
		return "", err
	}
	var tok struct{ AccessToken string }
	if status != http.StatusOK || json.Unmarshal(resp, &tok) != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("tokens/generate answered %d %s", status, resp)
	}
	return tok.AccessToken, nil
}
