package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingWriter records what reaches the log and in how many writes.
type countingWriter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.b.Write(p)
}

func (w *countingWriter) state() (string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String(), w.writes
}

func TestLogBufferHoldsLinesUntilFlush(t *testing.T) {
	var w countingWriter
	b := newLogBuffer(&w, time.Hour)
	defer b.Close()
	for i := range 100 {
		fmt.Fprintf(b, "line %d\n", i)
	}
	if got, n := w.state(); got != "" || n != 0 {
		t.Fatalf("before a flush the log got %d writes: %q", n, got)
	}
	b.Flush()
	got, n := w.state()
	if n != 1 || strings.Count(got, "\n") != 100 || !strings.HasPrefix(got, "line 0\n") || !strings.HasSuffix(got, "line 99\n") {
		t.Fatalf("after a flush: %d writes, %d lines", n, strings.Count(got, "\n"))
	}
}

func TestLogBufferFlushesOnItsInterval(t *testing.T) {
	var w countingWriter
	b := newLogBuffer(&w, 10*time.Millisecond)
	defer b.Close()
	fmt.Fprintln(b, "hello")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if got, _ := w.state(); got == "hello\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the interval never flushed the line")
		}
	}
}

func TestLogBufferWritesAFullBufferAndAGiantLine(t *testing.T) {
	var w countingWriter
	b := newLogBuffer(&w, time.Hour)
	defer b.Close()
	line := strings.Repeat("x", 1000) + "\n"
	for range 70 { // 70,070 bytes: the 66th line does not fit in 64 KiB
		b.Write([]byte(line))
	}
	if got, n := w.state(); n != 1 || len(got) != 65*len(line) {
		t.Fatalf("a full buffer: %d writes of %d bytes in all, want 1 of %d", n, len(got), 65*len(line))
	}
	giant := strings.Repeat("g", 2*logBufferSize) + "\n"
	b.Write([]byte(giant))
	got, n := w.state()
	if n != 3 || got != strings.Repeat(line, 70)+giant {
		t.Fatalf("a line larger than the buffer: %d writes; the log must hold the earlier lines, then it whole", n)
	}
}

func TestLogBufferCloseFlushesAndThenWritesThrough(t *testing.T) {
	var w countingWriter
	b := newLogBuffer(&w, time.Hour)
	fmt.Fprintln(b, "before")
	b.Close()
	if got, _ := w.state(); got != "before\n" {
		t.Fatalf("Close left %q", got)
	}
	fmt.Fprintln(b, "after")
	if got, n := w.state(); got != "before\nafter\n" || n != 2 {
		t.Fatalf("a write after Close: %q in %d writes", got, n)
	}
	b.Close() // a second Close is harmless
}

// TestLogBufferKeepsConcurrentLinesWhole: lines written by many goroutines at once reach the
// log whole, each once, each goroutine's in its order.
func TestLogBufferKeepsConcurrentLinesWhole(t *testing.T) {
	var w countingWriter
	b := newLogBuffer(&w, time.Hour) // only a full buffer and Close write, whatever the timing
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				fmt.Fprintf(b, "g%d %d %s\n", g, i, strings.Repeat("p", (g*i)%300))
			}
		}()
	}
	wg.Wait()
	b.Close()
	got, n := w.state()
	next := make([]int, writers)
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		var g, i int
		f := strings.Split(l, " ")
		if _, err := fmt.Sscanf(f[0]+" "+f[min(1, len(f)-1)], "g%d %d", &g, &i); err != nil || len(f) != 3 || g < 0 || g >= writers {
			t.Fatalf("a broken line %q: %v", l, err)
		}
		pad := f[2]
		if i != next[g] || len(pad) != (g*i)%300 || strings.Trim(pad, "p") != "" {
			t.Fatalf("goroutine %d: line %d (%d bytes of padding) where line %d was due", g, i, len(pad), next[g])
		}
		next[g]++
	}
	for g, c := range next {
		if c != lines {
			t.Errorf("goroutine %d: %d lines reached the log, want %d", g, c, lines)
		}
	}
	// A write per full buffer (each line is under 320 bytes) and one at Close.
	if most := len(got)/(logBufferSize-320) + 2; n > most {
		t.Errorf("%d writes for %d lines (%d bytes): the buffer did not batch them (at most %d)", n, writers*lines, len(got), most)
	}
}

// TestFlushingHandlerWritesWarningsAtOnce: a warning is in the log when Warn returns, after
// the lines logged before it; info lines wait for the interval.
func TestFlushingHandlerWritesWarningsAtOnce(t *testing.T) {
	var w countingWriter
	b := newLogBuffer(&w, time.Hour)
	defer b.Close()
	log := slog.New(flushingHandler{Handler: slog.NewTextHandler(b, nil), level: slog.LevelWarn, buf: b}).With("replica", "r1")
	log.Info("first")
	if got, _ := w.state(); got != "" {
		t.Fatalf("an info line was written at once: %q", got)
	}
	log.WithGroup("g").Warn("second", "k", "v")
	got, n := w.state()
	if n != 1 || !strings.Contains(got, "msg=first replica=r1\n") || !strings.Contains(got, "msg=second replica=r1 g.k=v\n") ||
		strings.Index(got, "first") > strings.Index(got, "second") {
		t.Fatalf("after a warning the log holds (%d writes):\n%s", n, got)
	}
	log.Log(context.Background(), slog.LevelError, "third")
	if got, _ := w.state(); !strings.Contains(got, "msg=third") {
		t.Fatalf("an error line was not written at once:\n%s", got)
	}
}
