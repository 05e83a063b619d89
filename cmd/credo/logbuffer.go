package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Log buffering bounds, documented in docs/operations.md: a line reaches the log at most
// logFlushEvery after it was written, a warning or an error at once.
const (
	logFlushEvery = 100 * time.Millisecond
	logBufferSize = 64 << 10
)

// logBuffer is serve's log writer. A busy server writes an access line per request; one write
// system call each was half of the access log's cost (BENCHMARKS.md), so lines collect here and
// reach the underlying writer in one write per logFlushEvery, or sooner when logBufferSize
// fills. Each Write is kept whole (slog writes one line per call). Close flushes what is left;
// a process killed with SIGKILL loses at most the last interval's lines.
type logBuffer struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	stop chan struct{}
	done chan struct{}
}

// newLogBuffer returns a logBuffer over w that flushes every interval until Close.
func newLogBuffer(w io.Writer, every time.Duration) *logBuffer {
	b := &logBuffer{w: w, buf: make([]byte, 0, logBufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go b.flushEvery(every)
	return b
}

func (b *logBuffer) flushEvery(every time.Duration) {
	defer close(b.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.Flush()
		case <-b.stop:
			return
		}
	}
}

// Write adds p to the buffer, writing the buffer out first when p would not fit. A p larger
// than the buffer is written straight through. It reports success for a buffered line: the
// log has no one to tell of a later failure.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf)+len(p) > cap(b.buf) {
		b.flushLocked()
	}
	if len(p) > cap(b.buf) {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Flush writes out the buffered lines.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	b.flushLocked()
	b.mu.Unlock()
}

func (b *logBuffer) flushLocked() {
	if len(b.buf) > 0 {
		_, _ = b.w.Write(b.buf)
		b.buf = b.buf[:0]
	}
}

// Close stops the interval and flushes. Lines written after Close go straight through.
func (b *logBuffer) Close() {
	b.mu.Lock()
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	b.mu.Unlock()
	<-b.done
	b.mu.Lock()
	b.flushLocked()
	b.buf = b.buf[:0:0] // every later Write is larger than the buffer: written at once
	b.mu.Unlock()
}

// flushingHandler writes records at or above level out of the buffer at once, so that a
// warning or an error is in the log when it is logged and lines before it are not delayed.
type flushingHandler struct {
	slog.Handler
	level slog.Level
	buf   *logBuffer
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= h.level {
		h.buf.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{Handler: h.Handler.WithAttrs(attrs), level: h.level, buf: h.buf}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{Handler: h.Handler.WithGroup(name), level: h.level, buf: h.buf}
}

var _ slog.Handler = flushingHandler{}
