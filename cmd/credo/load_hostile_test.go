package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestLoadRefusesHostileFiles: files an operator got from elsewhere — values with U+0000 or
// invalid UTF-8, headers naming members wrongly, rows of the wrong number of cells or longer
// than a request body may be, quotes never closed, empty or binary files — are refused as the
// API refuses the same values, each problem naming its row and its line or member, the
// quoted text escaped on the terminal; nothing of them is written (both stores). A byte order
// mark, CRLF or LF and line breaks inside quotes load.
func TestLoadRefusesHostileFiles(t *testing.T) {
	const header = "WidgetCode,OrganizationIdentifier,WidgetTitle\n"
	long := strings.Repeat("x", maxRowBytes)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			for _, c := range []struct {
				name, content string
				loaded        int      // rows loaded, or -1 when refused
				want          []string // in the order stderr says them
			}{
				{name: "bom-crlf.csv", content: "\ufeff" + strings.ReplaceAll(header+"A1,"+orgOne+",crlf\n", "\n", "\r\n"), loaded: 1},
				{name: "lf-quoted.csv", content: header + "A2," + orgOne + ",\"one\ntwo\r\nthree\"\nA3," + orgOne + ",\n", loaded: 2},
				{name: "only-header.csv", content: header, loaded: 0},
				{name: "nul.csv", content: header + "B1," + orgOne + ",a\x00b\nB\x002," + orgOne + ",x\n", loaded: -1, want: []string{
					"row 0: WidgetTitle contains U+0000 (NUL), which cannot be stored",
					"row 1: WidgetCode contains U+0000 (NUL), which cannot be stored",
					"2 problem(s); nothing was written"}},
				{name: "utf8.csv", content: header + "B3," + orgOne + ",a\xff\xfeb\nB4," + orgOne + ",\xed\xa0\x80\n", loaded: -1, want: []string{
					"row 0: WidgetTitle is not valid UTF-8 text",
					"row 1: WidgetTitle is not valid UTF-8 text"}},
				// A row of another number of cells, or longer than a request body may be, is
				// a problem of its row: the rows after it are still read and checked.
				{name: "cells.csv", content: header + "C1," + orgOne + ",x,extra\nC2," + orgOne + "\nC3,nope,\n", loaded: -1, want: []string{
					"row 0: line 2: 4 cells where the header (the first row) has 3",
					"row 1: line 3: 2 cells where the header (the first row) has 3",
					"row 2: OrganizationIdentifier ",
					"3 problem(s); nothing was written"}},
				{name: "long.csv", content: header + "D1," + orgOne + "," + long + "\nD2," + orgOne + ",\"" + long + "\"\nD3," + orgOne + ",ok\nD4\n", loaded: -1, want: []string{
					fmt.Sprintf("row 0: line 2: the row is %d bytes long; a row is at most %d bytes", len(long)+41, maxRowBytes),
					fmt.Sprintf("row 1: line 3: the row is %d bytes long; a row is at most %d bytes", len(long)+43, maxRowBytes),
					"row 3: line 5: 1 cells where the header (the first row) has 3",
					"3 problem(s); nothing was written"}},
				{name: "long.json", content: `[{"WidgetCode":"D5","OrganizationIdentifier":"` + orgOne + `"},{"WidgetCode":"D6","WidgetTitle":"` + long + `"}]`, loaded: -1, want: []string{
					fmt.Sprintf("row 1: byte 85: the row is %d bytes long; a row is at most %d bytes", len(long)+36, maxRowBytes),
					"1 problem(s); nothing was written"}},
				{name: "unclosed.csv", content: header + "E1," + orgOne + ",fine\nE2," + orgOne + ",\"never closed\nE3," + orgOne + ",x\n", loaded: -1, want: []string{
					"malformed CSV: row 1, line 3, column 3 (WidgetTitle): a quoted value is not closed; nothing was written"}},
				{name: "stray-quote.csv", content: header + "E4,\"" + orgOne + "\"x,\n", loaded: -1, want: []string{
					"row 0, line 2, column 2 (OrganizationIdentifier): 'x' after a closing quote"}},
				// A header names members as a body does: once each, as they are spelt, with
				// text a body could hold; a name that would not read as itself is quoted.
				{name: "header-twice.csv", content: "WidgetCode,WidgetCode\nF1,F1\n", loaded: -1, want: []string{"WidgetCode is given more than once"}},
				{name: "header-unknown.csv", content: "WidgetCode, OrganizationIdentifier,,Nope\nF2,x,y,z\n", loaded: -1, want: []string{
					`" OrganizationIdentifier" is not a member of Widget; "" is not a member of Widget; Nope is not a member of Widget`}},
				{name: "header-nul.csv", content: "WidgetCode,Wid\x00get,Wid\xffget\nF3,x,y\n", loaded: -1, want: []string{
					`the member name "Wid\x00get" contains U+0000 (NUL), which cannot be stored; the member name "Wid\xffget" is not valid UTF-8 text`}},
				{name: "header-missing.csv", content: "OrganizationIdentifier\n" + orgOne + "\n", loaded: -1, want: []string{"row 0: WidgetCode is required"}},
				// Text of the file quoted in a message does not act on the terminal.
				{name: "escape.csv", content: "WidgetCode,OrganizationIdentifier,\x1b[2J\u202e\n\x1b[31mG," + orgOne + ",\n", loaded: -1, want: []string{
					`"\x1b[2J\u202e" is not a member of Widget`}},
				{name: "escape-repeat.csv", content: "WidgetCode,OrganizationIdentifier\n\x1b[31mG," + orgOne + "\n\x1b[31mG," + orgOne + "\n", loaded: -1, want: []string{
					`row 1: OrganizationIdentifier, WidgetCode ` + orgOne + `, \x1b[31mG repeats row 0`}},
				// So does the file's name, which prefixes each problem.
				{name: "name-\x1b[2J\u202e.csv", content: "WidgetCode,OrganizationIdentifier\nH1,nope\n", loaded: -1, want: []string{
					`name-\x1b[2J\u202e.csv: row 0: OrganizationIdentifier `}},
				{name: "empty.csv", content: "", loaded: -1, want: []string{"the file is empty: want a CSV header row of Widget member names, or a JSON array; nothing was written"}},
				{name: "blank.csv", content: "\r\n\n\n", loaded: -1, want: []string{"the file is empty"}},
				{name: "empty.json", content: "", loaded: -1, want: []string{"the file is empty: want a JSON array of Widget objects"}},
				{name: "binary.csv", content: "\x00\x01\x02\xff\x1b,\x00\n\x03\x04", loaded: -1, want: []string{
					`the member name "\x00\x01\x02\xff\x1b" contains U+0000 (NUL), which cannot be stored`}},
			} {
				file := filepath.Join(dir, c.name)
				if err := os.WriteFile(file, []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
				code, out, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--descriptors", fixtures, "--resource", "Widget", file)
				if c.loaded >= 0 {
					if want := fmt.Sprintf("loaded %d Widget", c.loaded); code != 0 || !strings.Contains(out, want) {
						t.Errorf("%s: exit %d, %q %q; want %q", c.name, code, out, stderr, want)
					}
					continue
				}
				if code != 1 {
					t.Errorf("%s: exit %d, want 1: %s", c.name, code, stderr)
				}
				if strings.ContainsAny(stderr, "\x00\x1b\u202e") || !strings.HasSuffix(stderr, "\n") || len(stderr) > 4096 {
					t.Errorf("%s: stderr holds what does not print, or is %d bytes long: %q", c.name, len(stderr), stderr)
				}
				rest := stderr
				for _, w := range c.want {
					i := strings.Index(rest, w)
					if i < 0 {
						t.Errorf("%s: stderr does not say %q (in this order):\n%s", c.name, w, stderr)
						break
					}
					rest = rest[i+len(w):]
				}
			}
			reg, st := loaded(t, b.URL, p, resources.FS, os.DirFS(fixtures))
			w := reg.MustByName("Widget")
			if n, err := st.Count(context.Background(), w, engine.Query{}, engine.AllOrganizations()); err != nil || n != 3 {
				t.Errorf("%d widgets (%v), want the 3 of the files that loaded", n, err)
			}
		})
	}
}

// TestLoadReadsLongLinesInBoundedMemory: a CSV or JSON file whose one line is 64 MiB is read
// holding at most a few rows' worth of it (a row is at most maxRowBytes), where the whole
// line was held, twice over, before; the row is refused.
func TestLoadReadsLongLinesInBoundedMemory(t *testing.T) {
	reg, err := engine.Load(resources.FS, os.DirFS(fixtures))
	if err != nil {
		t.Fatal(err)
	}
	w := reg.MustByName("Widget")
	const line = 64 << 20
	dir := t.TempDir()
	for _, c := range []struct{ name, head, tail string }{
		{"long.csv", "WidgetCode,WidgetTitle\nA,", "\nB,b\n"},
		{"unclosed.csv", "WidgetCode,WidgetTitle\nA,\"", ""},
		{"long.json", `[{"WidgetCode":"A","WidgetTitle":"`, `"}]`},
	} {
		file := filepath.Join(dir, c.name)
		f, err := os.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(c.head)
		io.Copy(f, io.LimitReader(repeatReader('x'), line))
		f.WriteString(c.tail)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		f, err = os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rows, err := newRowReader(w, file, f)
		for err == nil {
			_, err = rows.next()
		}
		runtime.ReadMemStats(&after)
		f.Close()
		if rows.err == nil && rows.problems.Len() == 0 {
			t.Errorf("%s: a 64 MiB row was read without a problem", c.name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 16*maxRowBytes {
			t.Errorf("%s: reading a %d-byte line allocated %d bytes, want at most %d", c.name, line, got, 16*maxRowBytes)
		}
	}
}

// repeatReader reads the byte it is, endlessly.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	copy(p, bytes.Repeat([]byte{byte(r)}, len(p)))
	return len(p), nil
}
