package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"credo/handlers"
)

// commit is the commit the binary was built from, set at link time by make build
// (-ldflags "-X main.commit=…") for builds without version control stamping (-buildvcs=false,
// a source tree without .git); the build information's vcs.revision wins when present.
var commit string

// buildInfo is what credo version reports: the version set at link time (make build:
// -ldflags "-X credo/handlers.Version=…", as platform/version and OpenAPI report it), and
// from the binary's build information the module version, the commit and the Go version.
type buildInfo struct {
	Version  string
	Module   string
	Commit   string
	Time     string
	Modified bool
	Go       string
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: handlers.Version, Module: "credo (unknown)", Commit: commit,
		Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = info.Main.Path + " " + info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func (b buildInfo) String() string {
	commit := "unknown (built without version control information)"
	if b.Commit != "" {
		commit = b.Commit
		if b.Time != "" {
			commit += " " + b.Time
		}
		if b.Modified {
			commit += " (modified)"
		}
	}
	return fmt.Sprintf("credo %s\nmodule: %s\ncommit: %s\ngo:     %s\n", b.Version, b.Module, commit, b.Go)
}

// version prints the build's version, module version, commit and Go version.
func version(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs := newFlags("version", "credo version", "Print the version, module version, commit and Go version of this build.")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.args(0, 0); err != nil {
		return err
	}
	fmt.Fprint(stdout, readBuildInfo())
	return nil
}
