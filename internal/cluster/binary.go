package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Binary builds credo (cmd/credo) once per test binary and returns the executable's path.
// Call Main from TestMain so that the build folder is removed at the end.
func Binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "credo-cluster-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "credo")
		// go test runs with the go command on PATH (GOROOT/bin), as make test and CI do.
		out, err := exec.Command("go", "build", "-o", built.path, "credo/cmd/credo").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build credo/cmd/credo: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// Main runs the tests and removes what Binary built.
func Main(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
