package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Exit codes, as Go's own tools use them: 0 success, 1 a runtime error, 2 a usage error.
// exitDrainIncomplete is serve's when a shutdown ran out of time: requests abandoned, or an
// interrupted start-up's statement that PostgreSQL did not confirm it stopped (see serve).
const (
	exitOK              = 0
	exitError           = 1
	exitUsage           = 2
	exitDrainIncomplete = 3
)

// usageError is a command line that cannot run: an unknown flag, a missing argument, a value
// that does not parse. It exits 2 and shows the command's synopsis when it has one.
type usageError struct {
	err      error
	synopsis string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// helpRequest is -h or --help: the command's help goes to stdout and it exits 0.
type helpRequest struct{ text string }

func (h *helpRequest) Error() string { return "help requested" }

// codeError carries an exit code other than 1 for a runtime error.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// flags is one command's flag set with what its help shows: the synopsis and a description.
type flags struct {
	*flag.FlagSet
	synopsis string
	doc      string
}

// newFlags starts a command's flag set. synopsis is the line after "usage: ", e.g.
// "credo load [flags] FILE"; doc describes the command and its arguments.
func newFlags(name, synopsis, doc string) *flags {
	fs := flag.NewFlagSet("credo "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are written by run, to the right stream
	return &flags{FlagSet: fs, synopsis: synopsis, doc: doc}
}

// help renders the command's help: synopsis, description and its own flags.
func (f *flags) help() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "usage: %s\n\n%s\n", f.synopsis, strings.TrimSpace(f.doc))
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		b.WriteString("\nflags:\n")
		f.SetOutput(&b)
		f.PrintDefaults()
		f.SetOutput(io.Discard)
	}
	return b.String()
}

// parse parses the command line: -h is a helpRequest, a bad flag a usageError.
func (f *flags) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &helpRequest{f.help()}
		}
		// flag quotes the value it refused, which may be a database URL with its password.
		return &usageError{err: errors.New(hidePassword(err.Error())), synopsis: f.synopsis}
	}
	return nil
}

// usage returns a usage error of the command that shows its synopsis.
func (f *flags) usage(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...), synopsis: f.synopsis}
}

// args checks the number of arguments after the flags.
func (f *flags) args(min, max int) error {
	if n := f.NArg(); n < min || n > max {
		return f.usage("wrong number of arguments (%d)", n)
	}
	return nil
}

// exit reports err of the command name on stderr (help on stdout) and returns the exit code.
func exit(name string, err error, stdout, stderr io.Writer) int {
	var help *helpRequest
	var usage *usageError
	var coded *codeError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &help):
		fmt.Fprint(stdout, help.text)
		return exitOK
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "credo %s: %s\n", name, printable(err.Error()))
		if usage.synopsis != "" {
			fmt.Fprintf(stderr, "usage: %s\n", usage.synopsis)
		}
		fmt.Fprintf(stderr, "Run 'credo %s -h' for its flags and arguments.\n", name)
		return exitUsage
	case errors.As(err, &coded):
		fmt.Fprintf(stderr, "credo %s: %s\n", name, printable(err.Error()))
		return coded.code
	}
	fmt.Fprintf(stderr, "credo %s: %s\n", name, printable(err.Error()))
	return exitError
}

// printable escapes what would not print as itself on a terminal — control characters (an
// ANSI escape sequence, a carriage return), format characters such as U+202E, invalid UTF-8 —
// as Go escapes them (\x1b, \u202e, \xff), so that an error quoting a file's or a database's
// text shows that text rather than acting on the operator's terminal.
func printable(s string) string {
	clean := true
	for _, c := range s {
		if c == utf8.RuneError || !unicode.IsPrint(c) && c != '\n' && c != '\t' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		c, size := utf8.DecodeRuneInString(s)
		switch {
		case c == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[0])
		case c == '\n' || c == '\t' || unicode.IsPrint(c):
			b.WriteString(s[:size])
		default:
			q := strconv.QuoteRune(c)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[size:]
	}
	return b.String()
}

// passwordRe finds the password of a URL's user information, wherever the URL is in the text.
var passwordRe = regexp.MustCompile(`(://[^:/@\s]*):[^@/\s]*@`)

// hidePassword hides any URL password in a value that did not parse, for its error message.
func hidePassword(v string) string { return passwordRe.ReplaceAllString(v, "${1}:xxxxx@") }
