package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// openInput opens the file credo load reads, in a way a signal can stop: ctx is main's signal
// context, which takes SIGINT and SIGTERM from the runtime, so a load blocked in the kernel
// would ignore both. Opening a FIFO that no process writes to waits for a writer, so the open
// runs apart and the load returns context.Cause(ctx) if ctx ends first (the open, left behind,
// closes what it opens). A directory is refused naming it. The caller calls the returned stop
// when done: until then, the end of ctx also wakes a read that waits for a writer's next bytes
// (a pipe or FIFO, which os.File reads through the runtime's poller; a regular file's reads do
// not wait).
func openInput(ctx context.Context, name string) (f *os.File, stop func() bool, err error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(name)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		f, err = o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is a directory; give a CSV or JSON file", name)
	}
	// A deadline in the past wakes a pending read with os.ErrDeadlineExceeded; on a regular
	// file SetReadDeadline fails with os.ErrNoDeadline and nothing waits.
	stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	return f, stop, nil
}
