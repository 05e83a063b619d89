package engine_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"credo/engine"
)

// FuzzCSVRoundTrip: a row that AppendCSVRow writes, CSVReader reads back byte for byte, alone
// or after another row, whatever its cells hold.
func FuzzCSVRoundTrip(f *testing.F) {
	for _, c := range [][3]string{
		{"a", "b", "c"}, {"", "", ""}, {"\"", ",", "\r\n"}, {" x", "y\t", "\r"}, {"a\nb", "\"\"", "é"}, {"\r\r\n", "\n", ""},
	} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, rows := range [][][]string{{{a, b, c}}, {{a}}, {{"h"}, {a}}, {{"x", "y", "z"}, {a, b, c}, {c, b, a}}} {
			var out []byte
			for _, r := range rows {
				out = engine.AppendCSVRow(out, r)
			}
			got, err := readCSV(out)
			if err != nil || !slices.EqualFunc(got, rows, slices.Equal) {
				t.Fatalf("wrote %q as %q, read back %q, %v", rows, out, got, err)
			}
		}
	})
}

// FuzzCSVReader: reading any bytes never panics; a failure is an ErrCSV; every row read has
// the first row's number of cells, and written again by AppendCSVRow reads back the same.
func FuzzCSVReader(f *testing.F) {
	for _, s := range []string{"a,b\r\nc,d\r\n", "a,b\r\nc,\"d\r\n", "\"a\"\"b\",c\n\n\nd,e", "a\r\rb,c", "\"x\"y", "", "\r\n\r\n", "a,\"\r\n\"\r\n", "\r0", "a\n\r"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := readCSV(data)
		if err != nil {
			if !errors.Is(err, engine.ErrCSV) {
				t.Fatalf("read %q: %v, not an ErrCSV", data, err)
			}
			return
		}
		var out []byte
		for _, r := range rows {
			if len(r) != len(rows[0]) {
				t.Fatalf("read %q: rows of %d and %d cells", data, len(rows[0]), len(r))
			}
			out = engine.AppendCSVRow(out, r)
		}
		again, err := readCSV(out)
		if err != nil || !slices.EqualFunc(again, rows, slices.Equal) {
			t.Fatalf("read %q as %q; written as %q it reads %q, %v", data, rows, out, again, err)
		}
	})
}

func readCSV(data []byte) ([][]string, error) {
	cr := engine.NewCSVReader(bytes.NewReader(data), 1<<20)
	var rows [][]string
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}
