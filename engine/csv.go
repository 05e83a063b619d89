package engine

import (
	"io"
	"strings"
)

// csvFlushAt is how many bytes a CSVWriter gathers before it writes them out: large enough
// that a row is rarely a write of its own, small enough that memory stays flat.
const csvFlushAt = 32 << 10

// CSVWriter writes records as CSV (RFC 4180, decisions §5): a header row of member names,
// then one row per record, each row ended by CRLF.
//
// Values are kept byte for byte. A cell holding a comma, a double quote, a CR or an LF, or
// starting or ending with a space or a tab, is quoted, and inside the quotes only the double
// quotes are doubled: a line feed in a value stays a line feed and a CR stays a CR.
// (encoding/csv's Writer with UseCRLF turns every LF inside a value into CRLF and drops a lone
// CR, which changes the data.) Cells are TextValues: null is an empty cell.
//
// It is the one CSV encoder of credo: list and search with Format=csv and the gradebook
// export both use it.
type CSVWriter struct {
	w      io.Writer
	fields []*Field
	cells  []string
	buf    []byte
	err    error
}

// NewCSVWriter returns a writer of records with the given members, in order, to w.
func NewCSVWriter(w io.Writer, fields []*Field) *CSVWriter {
	return &CSVWriter{w: w, fields: fields, buf: make([]byte, 0, 4096)}
}

// WriteHeader writes the header row: the member names.
func (c *CSVWriter) WriteHeader() error {
	return c.row(Names(c.fields))
}

// Write writes one record as a row.
func (c *CSVWriter) Write(rec Record) error {
	c.cells = TextValues(rec, c.fields, c.cells)
	return c.row(c.cells)
}

// Flush writes out what is gathered; it returns the first error of any write.
func (c *CSVWriter) Flush() error {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
		c.buf = c.buf[:0]
	}
	return c.err
}

func (c *CSVWriter) row(cells []string) error {
	if c.err != nil {
		return c.err
	}
	c.buf = AppendCSVRow(c.buf, cells)
	if len(c.buf) >= csvFlushAt {
		return c.Flush()
	}
	return nil
}

// AppendCSVRow appends cells as one CSV row ended by CRLF, quoting as CSVWriter says. A row
// of one empty cell is written `""`: as an empty line, readers would skip it.
func AppendCSVRow(b []byte, cells []string) []byte {
	if len(cells) == 1 && cells[0] == "" {
		return append(b, '"', '"', '\r', '\n')
	}
	for i, s := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		if !csvNeedsQuotes(s) {
			b = append(b, s...)
			continue
		}
		b = append(b, '"')
		for {
			j := strings.IndexByte(s, '"')
			if j < 0 {
				break
			}
			b = append(b, s[:j+1]...)
			b = append(b, '"')
			s = s[j+1:]
		}
		b = append(b, s...)
		b = append(b, '"')
	}
	return append(b, '\r', '\n')
}

// csvNeedsQuotes reports whether a cell must be quoted to read back as it is: it holds a
// separator, a quote or a line break, or it has blanks at an end that a reader may trim.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if strings.ContainsAny(s, ",\"\r\n") {
		return true
	}
	first, last := s[0], s[len(s)-1]
	return first == ' ' || first == '\t' || last == ' ' || last == '\t'
}
