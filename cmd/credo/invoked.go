package main

import (
	"os"
	"strings"
)

// invokedAs is the program as its user ran it, for a command line that credo prints for them
// to paste: os.Args[0], the path as invoked (./bin/credo after make build, credo from PATH, an
// absolute path from a service unit), which runs from where they ran it, as a base name would
// not (./bin is not on PATH). It is quoted for a POSIX shell when it holds anything but
// letters, digits and ./_+-, and is "credo" when the system gave no name.
func invokedAs() string {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return "credo"
	}
	name := os.Args[0]
	if strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./_+-") == "" {
		return name
	}
	return "'" + strings.ReplaceAll(name, "'", `'\''`) + "'"
}
