package engine_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestAppendCSVRowKeepsValues pins the quoting and checks that every value reads back byte for
// byte with a strict RFC 4180 reader, and with encoding/csv's Reader up to the one change that
// reader documents (a CRLF inside a field reads as LF).
func TestAppendCSVRowKeepsValues(t *testing.T) {
	for _, c := range []struct {
		cells []string
		want  string
	}{
		{cells: []string{"a", "", "b c"}, want: "a,,b c\r\n"},
		{cells: []string{"line\nfeed"}, want: "\"line\nfeed\"\r\n"},
		{cells: []string{"crlf\r\nx", "cr\ry"}, want: "\"crlf\r\nx\",\"cr\ry\"\r\n"},
		{cells: []string{`say "hi"`, "a,b"}, want: "\"say \"\"hi\"\"\",\"a,b\"\r\n"},
		{cells: []string{" lead", "trail\t", "mid dle"}, want: "\" lead\",\"trail\t\",mid dle\r\n"},
		{cells: []string{`\.`, "é 漢字"}, want: "\\.,é 漢字\r\n"},
		{cells: []string{""}, want: "\"\"\r\n"},
	} {
		if got := string(engine.AppendCSVRow(nil, c.cells)); got != c.want {
			t.Errorf("AppendCSVRow(%q) = %q, want %q", c.cells, got, c.want)
		}
	}

	rows := [][]string{{"Name", "Value"}, {testenv.CSVValue, ""}, {"\n", "\r\n"}, {"\"", ","}, {""}}
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ab ,\"\r\n\té"
	for range 500 {
		row := make([]string, 1+rng.IntN(4))
		for i := range row {
			var b strings.Builder
			for range rng.IntN(8) {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
			row[i] = b.String()
		}
		rows = append(rows, row)
	}
	var out []byte
	for _, r := range rows {
		out = engine.AppendCSVRow(out, r)
	}
	strict, err := testenv.ReadCSV(string(out))
	if err != nil {
		t.Fatal(err)
	}
	cr := csv.NewReader(bytes.NewReader(out))
	cr.FieldsPerRecord = -1
	std, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("encoding/csv cannot read the output: %v", err)
	}
	if len(strict) != len(rows) || len(std) != len(rows) {
		t.Fatalf("read %d and %d rows, wrote %d", len(strict), len(std), len(rows))
	}
	for i, r := range rows {
		for j, want := range r {
			if strict[i][j] != want {
				t.Errorf("row %d cell %d: read %q, wrote %q", i, j, strict[i][j], want)
			}
			if std[i][j] != strings.ReplaceAll(want, "\r\n", "\n") {
				t.Errorf("row %d cell %d: encoding/csv read %q, wrote %q", i, j, std[i][j], want)
			}
		}
	}
}

// TestCSVWriterFlushes checks that a CSVWriter writes the header and rows in order, gathering
// them, and reports a failed write.
func TestCSVWriterFlushes(t *testing.T) {
	var buf bytes.Buffer
	w := engine.NewCSVWriter(&buf, nil)
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %q before Flush; rows are gathered", buf.String())
	}
	if err := w.Flush(); err != nil || buf.String() != "\r\n" {
		t.Fatalf("Flush: %v %q", err, buf.String())
	}
	fail := engine.NewCSVWriter(failingWriter{}, nil)
	_ = fail.WriteHeader()
	if err := fail.Flush(); err == nil {
		t.Fatal("a failed write was not reported")
	}
	if err := fail.WriteHeader(); err == nil {
		t.Fatal("a write after a failed one was not refused")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("write failed") }
