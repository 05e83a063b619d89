package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds a process's start-up (migrations included) until it listens.
const startTimeout = 60 * time.Second

// servingRe finds the address in the line `credo serve` prints once it listens.
var servingRe = regexp.MustCompile(`credo: serving http://([^/\s]+)/`)

// Process is one `credo serve` process. It listens on a loopback port chosen at its first
// start and kept across restarts, as a replica keeps its address.
type Process struct {
	t    testing.TB // for Restart only: start reports its errors
	bin  string
	env  []string
	args []string
	addr string

	mu   sync.Mutex
	cmd  *exec.Cmd
	log  bytes.Buffer // every start's standard error, for failure reports
	done chan struct{}
	err  error // the exit of the last run, once done is closed
}

// Start runs `credo serve args…` with env added to the test's environment, and waits until it
// listens. The process is killed when the test ends, if it still runs.
func Start(t testing.TB, bin string, env []string, args ...string) *Process {
	t.Helper()
	return StartAll(t, 1, bin, env, args...)[0]
}

// StartAll starts n processes at once (their start-up migrations then race, as replicas
// started together do) and waits until every one listens.
func StartAll(t testing.TB, n int, bin string, env []string, args ...string) []*Process {
	t.Helper()
	ps := make([]*Process, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range ps {
		p := &Process{t: t, bin: bin, env: env, args: args, addr: "127.0.0.1:0"}
		ps[i] = p
		t.Cleanup(func() {
			p.Kill()
			if t.Failed() {
				t.Logf("credo %s log:\n%s", p.addr, p.Log())
			}
		})
		wg.Go(func() { errs[i] = p.start() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

// URL returns the process's root URL.
func (p *Process) URL() string { return "http://" + p.addr }

// Addr returns the process's listen address.
func (p *Process) Addr() string { return p.addr }

// Log returns what the process wrote to its standard error, over every start.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Launch runs `credo serve args…` as Start does, but returns at once, without waiting until it
// listens: for a start-up that is to be interrupted. Wait and Log tell how it ended.
func Launch(t testing.TB, bin string, env []string, args ...string) *Process {
	t.Helper()
	p := &Process{t: t, bin: bin, env: env, args: args, addr: "127.0.0.1:0"}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("credo %s log:\n%s", p.addr, p.Log())
		}
	})
	if _, err := p.spawn(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *Process) start() error {
	listening, err := p.spawn()
	if err != nil {
		return err
	}
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	select {
	case addr := <-listening:
		p.addr = addr
		return nil
	case <-done:
		return fmt.Errorf("cluster: credo exited before listening: %v\n%s", p.exitErr(), p.Log())
	case <-time.After(startTimeout):
		p.Kill()
		return fmt.Errorf("cluster: credo did not listen within %v\n%s", startTimeout, p.Log())
	}
}

// spawn starts the process and returns the channel that receives its address once it listens.
func (p *Process) spawn() (<-chan string, error) {
	cmd := exec.Command(p.bin, append([]string{"serve", "--addr", p.addr}, p.args...)...)
	cmd.Env = append(os.Environ(), p.env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cluster: start credo: %w", err)
	}
	done := make(chan struct{})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := servingRe.FindStringSubmatch(line); m != nil {
				select {
				case listening <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	return listening, nil
}

func (p *Process) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Signal sends sig to the running process.
func (p *Process) Signal(sig os.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return errors.New("cluster: no process")
	}
	return cmd.Process.Signal(sig)
}

// Wait waits for the process to exit, at most until ctx ends, and returns its exit error.
func (p *Process) Wait(ctx context.Context) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	select {
	case <-done:
		return p.exitErr()
	case <-ctx.Done():
		return fmt.Errorf("cluster: credo %s still runs: %w", p.addr, ctx.Err())
	}
}

// Stop sends SIGTERM and waits (at most a minute) for the process to exit; it returns the
// exit error, nil for a clean exit.
func (p *Process) Stop() error {
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return p.Wait(ctx)
}

// Restart starts the process again on the same address, after Stop.
func (p *Process) Restart() {
	p.t.Helper()
	p.mu.Lock()
	p.log.WriteString("--- restart ---\n")
	p.mu.Unlock()
	if err := p.start(); err != nil {
		p.t.Fatal(err)
	}
}

// Kill ends the process at once if it runs, and waits for it.
func (p *Process) Kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Kill()
	<-done
}
