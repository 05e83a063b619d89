// Command credo is the API server of the learning, assessment and credentialing platform,
// with the verbs that prepare its data: serve, load, seed, openapi, secret and version.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	// The engine's drivers and validator: every verb opens a database or loads descriptors.
	_ "credo/engine/postgres"
	_ "credo/engine/sqlite"
	_ "credo/engine/validator"
)

// command is one verb of the command line. run parses its own flags (see newFlags).
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands lists the verbs in the order credo -h shows them.
var commands = []command{
	{"serve", "serve the API", serve},
	{"load", "load records from a JSON or CSV file into a partition", load},
	{"seed", "fill a partition with demo data", seedCmd},
	{"secret", "create, list or revoke client secrets", secret},
	{"openapi", "print the OpenAPI 3.1 document", openapi},
	{"version", "print the version, commit and Go version of this build", version},
}

func usage() string {
	s := "usage: credo <command> [flags] [arguments]\n\ncommands:\n"
	for _, c := range commands {
		s += fmt.Sprintf("  %-9s %s\n", c.name, c.summary)
	}
	return s + `
Run "credo <command> -h" for a command's flags and arguments.
Flags have environment twins (CREDO_*), named in each command's help.
Exit status: 0 success, 1 error, 2 usage error, 3 serve's shutdown ran out of time
(requests abandoned, or a start-up statement PostgreSQL did not confirm it stopped).
`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches a command line and returns the process exit code (see exit).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			return run(ctx, []string{args[1], "-h"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage())
		return exitOK
	case "-version", "--version":
		return run(ctx, []string{"version"}, stdin, stdout, stderr)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return exit(c.name, c.run(ctx, args[1:], stdin, stdout, stderr), stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "credo: unknown command %q\n\n%s", args[0], usage())
	return exitUsage
}
