package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestLoadStopsAtSignalWhileReading: a signal (SIGINT, SIGTERM: the cancelled context main
// gives run) stops a load that waits for its file — a FIFO no process has opened yet, or one
// whose writer stopped mid-row — within a second, exit 1, saying it was stopped and that
// nothing was written; a directory is refused naming it. Before, the open and the read
// blocked in the kernel and main's signal context swallowed the signal: `kill` did not end the
// load, only SIGKILL did.
func TestLoadStopsAtSignalWhileReading(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			dir := t.TempDir()
			// The partition is migrated before, so that the signal finds each load reading.
			_, st := loaded(t, b.URL, p, resources.FS, os.DirFS(fixtures))
			args := []string{"load", "--database", b.URL, "--partition", p, "--descriptors", fixtures, "--resource", "Widget"}
			stopped := func(file string, write func(w *os.File)) {
				t.Helper()
				if err := syscall.Mkfifo(file, 0o600); err != nil {
					t.Fatal(err)
				}
				var writer *os.File
				opened := make(chan struct{})
				if write != nil {
					go func() {
						defer close(opened)
						w, err := os.OpenFile(file, os.O_WRONLY, 0)
						if err != nil {
							t.Error(err)
							return
						}
						writer = w
						write(w) // and keep it open, as a writer that stalls does
					}()
				}
				ctx, cancel := context.WithCancelCause(context.Background())
				time.AfterFunc(time.Second, func() { cancel(errors.New("terminated signal received")) })
				var out, errb bytes.Buffer
				start := time.Now()
				code := run(ctx, append(args, file), strings.NewReader(""), &out, &errb)
				if took := time.Since(start); took > 6*time.Second {
					t.Errorf("%s: the load took %v after the signal", filepath.Base(file), took)
				}
				if code != 1 || !strings.Contains(errb.String(), "stopped (terminated signal received)") || !strings.HasSuffix(errb.String(), "; nothing was written\n") {
					t.Errorf("%s: exit %d, %q; want 1, saying the signal stopped it and nothing was written", filepath.Base(file), code, errb.String())
				}
				if write != nil {
					<-opened
					if writer != nil {
						writer.Close()
					}
				} else {
					// Let the open that still waits return.
					if w, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						w.Close()
					}
				}
			}
			stopped(filepath.Join(dir, "nobody.csv"), nil)
			stopped(filepath.Join(dir, "stalled.csv"), func(w *os.File) {
				_, _ = w.WriteString("WidgetCode,OrganizationIdentifier\nW1," + orgOne + "\nW2,")
			})
			stopped(filepath.Join(dir, "stalled.json"), func(w *os.File) {
				_, _ = w.WriteString(`[{"WidgetCode":"W1","OrganizationIdentifier":"` + orgOne + `"},{"WidgetCode":`)
			})
			if n, err := st.Count(context.Background(), st.Registry().MustByName("Widget"), engine.Query{}, engine.AllOrganizations()); err != nil || n != 0 {
				t.Errorf("after the stopped loads: %d widgets, %v; want 0", n, err)
			}
			if code, _, stderr := cli(t, append(args, dir)...); code != 1 || !strings.Contains(stderr, dir+" is a directory; give a CSV or JSON file") {
				t.Errorf("a directory: exit %d, %q", code, stderr)
			}
		})
	}
}
