package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeHintCanBePasted: the start-up hint names the program as it was run, so that a
// newcomer who started ./bin/credo (make build, README) can paste the secret command it prints
// into a second terminal: pasted with the --database flag it asks for, it creates the secret.
func TestServeHintCanBePasted(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(dir, "bin", "credo")); err != nil {
		t.Fatal(err)
	}
	data := "sqlite:" + filepath.Join(dir, "data")
	cmd := exec.Command(filepath.Join(dir, "bin", "credo"), "serve", "--addr", "127.0.0.1:0", "--database", data)
	cmd.Args[0], cmd.Dir = "./bin/credo", dir
	p := startCommand(t, cmd)
	p.waitAddr(t)
	m := regexp.MustCompile(`To get a token: (.*) \(with the same --database`).FindStringSubmatch(p.log())
	if m == nil || !strings.HasPrefix(m[1], "./bin/credo secret create ") {
		t.Fatalf("the hint does not name the program as run (./bin/credo):\n%s", p.log())
	}
	paste := exec.Command("sh", "-c", m[1]+" --database "+data+" --json")
	paste.Dir, paste.Env = dir, append(os.Environ(), "CREDO_TEST_RUN_MAIN=1")
	out, err := paste.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"Secret":`) {
		t.Errorf("the pasted %q: %v\n%s", m[1], err, out)
	}
	p.cmd.Process.Signal(os.Interrupt)
	p.wait(t, 10*time.Second)
}
