package engine_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
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
	for range 500 {
		rows = append(rows, randomCells(rng, "ab ,\"\r\n\té", 1+rng.IntN(4)))
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

// randomCells returns n cells of up to 7 bytes drawn from alphabet.
func randomCells(rng *rand.Rand, alphabet string, n int) []string {
	row := make([]string, n)
	for i := range row {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		row[i] = b.String()
	}
	return row
}

// TestCSVReaderKeepsValues reads back, byte for byte, rows that CSVWriter's quoting writes —
// line breaks of every kind inside values included — and reads what encoding/csv reads where
// that reader changes nothing (no CR inside a quoted value), rows ended by CRLF or LF alike.
func TestCSVReaderKeepsValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	gen := func(alphabet string) [][]string {
		rows := [][]string{{"Name", "Value", "Other"}, {testenv.CSVValue, "", "\r\n"}, {"\"", ",", ""}}
		for range 500 {
			rows = append(rows, randomCells(rng, alphabet, 3))
		}
		return rows
	}
	readAll := func(t *testing.T, data []byte) [][]string {
		t.Helper()
		cr := engine.NewCSVReader(bytes.NewReader(data), 1<<20)
		var got [][]string
		for {
			row, err := cr.Read()
			if errors.Is(err, io.EOF) {
				return got
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, row)
		}
	}
	rows := gen("ab ,\"\r\n\té")
	var out []byte
	for _, r := range rows {
		out = engine.AppendCSVRow(out, r)
	}
	if got := readAll(t, out); !slices.EqualFunc(got, rows, slices.Equal) {
		t.Errorf("read back %d rows, not the %d written", len(got), len(rows))
		for i := range min(len(got), len(rows)) {
			if !slices.Equal(got[i], rows[i]) {
				t.Fatalf("row %d: read %q, wrote %q", i, got[i], rows[i])
			}
		}
	}

	// Where encoding/csv changes nothing, both readers agree; rows here end with LF, and
	// empty lines between them are skipped by both.
	var lf []byte
	for i, r := range gen("ab ,\"\n\té")[2:] { // from the rows without a CR
		lf = append(bytes.TrimSuffix(engine.AppendCSVRow(lf, r), []byte("\r\n")), '\n')
		if i%50 == 0 {
			lf = append(lf, '\n')
		}
	}
	std, err := csv.NewReader(bytes.NewReader(lf)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, lf); !slices.EqualFunc(got, std, slices.Equal) {
		t.Errorf("CSVReader and encoding/csv read LF-ended rows differently (%d and %d rows)", len(got), len(std))
		for i := range min(len(got), len(std)) {
			if !slices.Equal(got[i], std[i]) {
				t.Fatalf("row %d: %q and %q", i, got[i], std[i])
			}
		}
	}
	// A lone CR outside quotes ends a line, as spreadsheets read it: an empty line before a
	// row (found by FuzzLoadCSV: "\r0" was a bufio error), and a row's end.
	if got := readAll(t, []byte("\r0,a\r\n\n\rb,\r")); !slices.EqualFunc(got, [][]string{{"0", "a"}, {"b", ""}}, slices.Equal) {
		t.Errorf("rows after lone CRs: %q", got)
	}
	if got := readAll(t, []byte("\r")); got != nil {
		t.Errorf("a lone CR: %q, want no row", got)
	}
	// The last row may lack its line end; a last empty cell after a comma is a cell.
	if got := readAll(t, []byte("a,b\r\nc,")); !slices.EqualFunc(got, [][]string{{"a", "b"}, {"c", ""}}, slices.Equal) {
		t.Errorf("unterminated last row: %q", got)
	}
}

// TestCSVReaderReadsLoneCRLines: a file whose lines end with a lone CR (classic Mac, some
// Excel exports) reads row by row, where it read as one row; line breaks of every kind
// inside quotes stay as they are, and the lines of problems count lone CRs as line ends,
// inside quotes too. Files mixing line ends read alike.
func TestCSVReaderReadsLoneCRLines(t *testing.T) {
	want := [][]string{{"a", "b"}, {"1", "x\ry"}, {"2", "p\r\nq\nr"}, {"3", ""}}
	for _, in := range []string{
		"a,b\r1,\"x\ry\"\r2,\"p\r\nq\nr\"\r3,\r",
		"a,b\r\r1,\"x\ry\"\n2,\"p\r\nq\nr\"\r\n3,", // an empty line; CR, LF and CRLF
	} {
		rows, err := readCSV([]byte(in))
		if err != nil || !slices.EqualFunc(rows, want, slices.Equal) {
			t.Errorf("%q: read %q, %v; want %q", in, rows, err, want)
		}
	}
	// Lines: 1 header, 2-3 row "x\ry", 4-6 row "p\r\nq\nr", 7 the row of 3 cells.
	_, err := readCSV([]byte("a,b\r1,\"x\ry\"\r2,\"p\r\nq\nr\"\r3,4,5\r"))
	if err == nil || !strings.Contains(err.Error(), "line 7: 3 cells where the header (the first row) has 2") {
		t.Errorf("a row of 3 cells on line 7: %v", err)
	}
}

// TestCSVReaderRefusesMalformed checks each malformation is an ErrCSV naming its line and
// cell, and ends the input.
func TestCSVReaderRefusesMalformed(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a,b\r\nc,\"d\r\n", "line 2, cell 2: a quoted value is not closed"},
		{"a,b\r\nc,d\"e\r\n", "line 2, cell 2: a quote inside an unquoted value"},
		{"a,b\r\n\"c\"x,d\r\n", "line 2, cell 1: 'x' after a closing quote"},
	} {
		cr := engine.NewCSVReader(strings.NewReader(c.in), 1<<20)
		var err error
		for err == nil {
			_, err = cr.Read()
		}
		var cerr *engine.CSVError
		if !errors.Is(err, engine.ErrCSV) || !strings.Contains(err.Error(), c.want) || !errors.As(err, &cerr) || cerr.Skipped {
			t.Errorf("%q: %v, want an ErrCSV with %q that ends the input", c.in, err, c.want)
		}
	}
}

// TestCSVReaderSkipsRows: a row of another number of cells than the first, or longer than
// the reader's limit (its line end included), is read to its end, refused naming its first
// line, and skipped: the rows after it read as they are.
func TestCSVReaderSkipsRows(t *testing.T) {
	in := "a,b\n" + // the first row: 2 cells
		"1,2,3\n" + // 3 cells
		"\"m\nl\"\n" + // 1 cell, on lines 3 and 4
		"0123456789,x\n" + // 13 bytes: over the limit
		"\"0123\n\"\"6789\",\n" + // quoted, over the limit, with a line break: lines 6 and 7
		"1234567,8\r\n" + // 11 bytes with its CRLF: at the limit
		",\n"
	cr := engine.NewCSVReader(strings.NewReader(in), 11)
	var got []string
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		var cerr *engine.CSVError
		switch {
		case errors.As(err, &cerr) && cerr.Skipped && cerr.Cell == -1 && row == nil:
			got = append(got, err.Error())
		case err != nil:
			t.Fatalf("after %q: %v", got, err)
		default:
			got = append(got, strings.Join(row, "|"))
		}
	}
	want := []string{
		"a|b",
		"malformed CSV: line 2: 3 cells where the header (the first row) has 2",
		"malformed CSV: line 3: 1 cells where the header (the first row) has 2",
		"malformed CSV: line 5: the row is 13 bytes long; a row is at most 11 bytes",
		"malformed CSV: line 6: the row is 15 bytes long; a row is at most 11 bytes",
		"1234567|8",
		"|",
	}
	if !slices.Equal(got, want) {
		t.Errorf("read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCSVReaderBoundsMemory: a row of 64 MiB, unquoted or in a quoted value never closed, is
// read past holding none of it beyond the limit.
func TestCSVReaderBoundsMemory(t *testing.T) {
	const limit, line = 1 << 20, 64 << 20
	for _, head := range []string{"a,b\nx,", "a,b\nx,\""} {
		in := io.MultiReader(strings.NewReader(head), io.LimitReader(zeros{}, line), strings.NewReader("\ny,z\n"))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cr := engine.NewCSVReader(in, limit)
		var errs []error
		for {
			_, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				errs = append(errs, err)
				var cerr *engine.CSVError
				if !errors.As(err, &cerr) || !cerr.Skipped {
					break
				}
			}
		}
		runtime.ReadMemStats(&after)
		if len(errs) != 1 {
			t.Errorf("%q and %d bytes: %v, want one error", head, line, errs)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 8*limit {
			t.Errorf("%q and %d bytes: %d bytes allocated, want at most %d", head, line, got, 8*limit)
		}
	}
}

// zeros reads '0' bytes, endlessly.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}
