// Command credo is the API server of the learning, assessment and credentialing platform,
// with the verbs that prepare its data: serve, load, seed, openapi and secret.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: credo <command> [flags]

commands:
  serve     serve the API (flags or CREDO_* environment variables)
  load      load records from a JSON or CSV file: credo load --partition P --resource NAME FILE
  seed      fill a partition with demo data: credo seed --partition P [--rows N]
  secret    create or revoke client secrets: credo secret create|revoke …
  openapi   print the OpenAPI 3.1 document
Run "credo <command> -h" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches a command line and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stderr)
	case "load":
		err = load(ctx, args[1:], stdout)
	case "seed":
		err = seedCmd(ctx, args[1:], stdout)
	case "secret":
		err = secret(ctx, args[1:], stdout)
	case "openapi":
		err = openapi(args[1:], stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "credo: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "credo %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
