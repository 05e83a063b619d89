package engine

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// CSVReader reads CSV (RFC 4180) as CSVWriter writes it, keeping every value byte for byte:
// a line break inside a quoted value (CRLF, LF or a lone CR) stays as it is, where
// encoding/csv's Reader turns a CRLF there into LF. Rows end with CRLF or LF, the last one
// possibly with neither; empty lines are skipped; a quote inside an unquoted value, anything
// but a comma or the row's end after a closing quote, and a quoted value never closed are
// errors naming the line. Every row must have as many cells as the first.
//
// It is the one CSV decoder of credo (credo load); CSVWriter is the one encoder.
type CSVReader struct {
	r     *bufio.Reader
	line  int // the line the next row starts on, 1-based
	cells int // the first row's number of cells; 0 before it
	cell  strings.Builder
}

// NewCSVReader returns a reader of the CSV in r.
func NewCSVReader(r io.Reader) *CSVReader { return &CSVReader{r: bufio.NewReader(r), line: 1} }

// ErrCSV is the error of malformed CSV; the message names the line.
var ErrCSV = errors.New("malformed CSV")

// Read returns the next row's cells, or io.EOF after the last row.
func (c *CSVReader) Read() ([]string, error) {
	if err := c.skipEmptyLines(); err != nil {
		return nil, err
	}
	start := c.line
	var row []string
	for {
		cell, end, err := c.readCell()
		if err != nil {
			return nil, err
		}
		row = append(row, cell)
		if end {
			break
		}
	}
	if c.cells == 0 {
		c.cells = len(row)
	} else if len(row) != c.cells {
		return nil, fmt.Errorf("%w: line %d: %d cells, the first row has %d", ErrCSV, start, len(row), c.cells)
	}
	return row, nil
}

// skipEmptyLines consumes empty lines; io.EOF when nothing follows them. It looks ahead
// rather than reading and unreading: after a CR that no LF follows, a second UnreadByte was
// an error of bufio's ("\r0" did not read).
func (c *CSVReader) skipEmptyLines() error {
	for {
		b, err := c.r.Peek(2)
		switch {
		case len(b) == 0:
			return err
		case b[0] == '\n':
			_, _ = c.r.Discard(1) // buffered by Peek
		case b[0] == '\r' && len(b) == 2 && b[1] == '\n':
			_, _ = c.r.Discard(2)
		default:
			return nil
		}
		c.line++
	}
}

// next consumes the next byte when it is want.
func (c *CSVReader) next(want byte) bool {
	b, err := c.r.ReadByte()
	if err != nil {
		return false
	}
	if b != want {
		_ = c.r.UnreadByte()
		return false
	}
	return true
}

// readCell reads one cell and what ends it: a comma (end false), or the row's end (end
// true: CRLF, LF or the end of the input).
func (c *CSVReader) readCell() (string, bool, error) {
	c.cell.Reset()
	b, err := c.r.ReadByte()
	if err == io.EOF {
		return "", true, nil
	}
	if err != nil {
		return "", false, err
	}
	if b == '"' {
		return c.readQuoted()
	}
	for {
		switch {
		case b == ',':
			return c.cell.String(), false, nil
		case b == '\n':
			c.line++
			return c.cell.String(), true, nil
		case b == '\r' && c.next('\n'):
			c.line++
			return c.cell.String(), true, nil
		case b == '"':
			return "", false, fmt.Errorf("%w: line %d: a quote inside an unquoted value", ErrCSV, c.line)
		}
		c.cell.WriteByte(b)
		if b, err = c.r.ReadByte(); err == io.EOF {
			return c.cell.String(), true, nil
		} else if err != nil {
			return "", false, err
		}
	}
}

// readQuoted reads a quoted cell after its opening quote.
func (c *CSVReader) readQuoted() (string, bool, error) {
	start := c.line
	for {
		b, err := c.r.ReadByte()
		if err == io.EOF {
			return "", false, fmt.Errorf("%w: line %d: a quoted value is not closed", ErrCSV, start)
		}
		if err != nil {
			return "", false, err
		}
		if b == '\n' {
			c.line++
		}
		if b != '"' {
			c.cell.WriteByte(b)
			continue
		}
		if c.next('"') {
			c.cell.WriteByte('"')
			continue
		}
		// The closing quote: a comma or the row's end must follow.
		after, err := c.r.ReadByte()
		switch {
		case err == io.EOF:
			return c.cell.String(), true, nil
		case err != nil:
			return "", false, err
		case after == ',':
			return c.cell.String(), false, nil
		case after == '\n':
			c.line++
			return c.cell.String(), true, nil
		case after == '\r' && c.next('\n'):
			c.line++
			return c.cell.String(), true, nil
		}
		return "", false, fmt.Errorf("%w: line %d: %q after a closing quote, want a comma or the row's end", ErrCSV, c.line, after)
	}
}
