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
// encoding/csv's Reader turns a CRLF there into LF. Outside quotes a line ends with CRLF, LF
// or a lone CR, as spreadsheet programs read CSV: a file of classic-Mac line ends (some Excel
// exports) reads row by row, where it read as one header row. (So a CR that a value holds
// must be quoted, as RFC 4180 and CSVWriter quote it; unquoted, it ends the row.) The last
// row may have no line end; empty lines are skipped; a quote inside an unquoted value,
// anything but a comma or the row's end after a closing quote, and a quoted value never
// closed are errors naming the line. Every row must have as many cells as the first.
//
// A row is at most the reader's limit of bytes, its line end included: memory holds one row
// of at most that many bytes, whatever the input. A longer row, and a row of another number
// of cells than the first, is read to its end without being kept and refused (a *CSVError
// with Skipped set): the next Read reads on with the row after it.
//
// It is the one CSV decoder of credo (credo load); CSVWriter is the one encoder.
type CSVReader struct {
	r     *bufio.Reader
	line  int // the line the next row starts on, 1-based
	cells int // the first row's number of cells; 0 before it
	cell  strings.Builder
	limit int // a row's most bytes
	n     int // the bytes of the row being read
}

// NewCSVReader returns a reader of the CSV in r whose rows are at most limit bytes each.
func NewCSVReader(r io.Reader, limit int) *CSVReader {
	return &CSVReader{r: bufio.NewReader(r), line: 1, limit: limit}
}

// ErrCSV is the error of CSV the reader does not take (a *CSVError names the line).
var ErrCSV = errors.New("malformed CSV")

// CSVError is a problem of the CSV text: the line it is on, the cell when it is one cell's.
// A malformed row ends the input, since what follows cannot be told apart into rows; a row
// that is too long or of another number of cells than the first was read to its end and is
// skipped (Skipped): Read reads on.
type CSVError struct {
	Line    int // 1-based
	Cell    int // the 0-based cell of the row, -1 for a problem of the whole row
	Msg     string
	Skipped bool
}

func (e *CSVError) Error() string {
	if e.Cell < 0 {
		return fmt.Sprintf("%v: line %d: %s", ErrCSV, e.Line, e.Msg)
	}
	return fmt.Sprintf("%v: line %d, cell %d: %s", ErrCSV, e.Line, e.Cell+1, e.Msg)
}

// Unwrap makes errors.Is(err, ErrCSV) true.
func (e *CSVError) Unwrap() error { return ErrCSV }

// Read returns the next row's cells, or io.EOF after the last row.
func (c *CSVReader) Read() ([]string, error) {
	if err := c.skipEmptyLines(); err != nil {
		return nil, err
	}
	start := c.line
	c.n = 0
	var row []string
	cells := 0
	for {
		cell, end, err := c.readCell()
		if err != nil {
			var cerr *CSVError
			if errors.As(err, &cerr) {
				cerr.Cell = cells
			}
			return nil, err
		}
		cells++
		// Past the limit, or past the first row's cells, the row is refused: it is read to
		// its end and nothing more of it is kept.
		if c.n <= c.limit && (c.cells == 0 || cells <= c.cells) {
			row = append(row, cell)
		}
		if end {
			break
		}
	}
	switch {
	case c.n > c.limit:
		return nil, &CSVError{Line: start, Cell: -1, Skipped: true,
			Msg: fmt.Sprintf("the row is %d bytes long; a row is at most %d bytes", c.n, c.limit)}
	case c.cells == 0:
		c.cells = cells
	case cells != c.cells:
		return nil, &CSVError{Line: start, Cell: -1, Skipped: true,
			Msg: fmt.Sprintf("%d cells where the header (the first row) has %d", cells, c.cells)}
	}
	return row, nil
}

// skipEmptyLines consumes empty lines (each ended by CRLF, LF or a lone CR); io.EOF when
// nothing follows them. It looks ahead rather than reading and unreading: after a CR that no
// LF follows, a second UnreadByte was an error of bufio's ("\r0" did not read).
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
		case b[0] == '\r':
			_, _ = c.r.Discard(1)
		default:
			return nil
		}
		c.line++
	}
}

// readByte reads the row's next byte, counting it.
func (c *CSVReader) readByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// keep adds b to the cell while the row is within the limit: past it the row is refused, and
// only its length is counted.
func (c *CSVReader) keep(b byte) {
	if c.n <= c.limit {
		c.cell.WriteByte(b)
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
	c.n++
	return true
}

// followedBy reports whether the next byte is want, without reading it.
func (c *CSVReader) followedBy(want byte) bool {
	b, err := c.r.Peek(1)
	return err == nil && b[0] == want
}

// readCell reads one cell and what ends it: a comma (end false), or the row's end (end
// true: CRLF, LF, a lone CR or the end of the input).
func (c *CSVReader) readCell() (string, bool, error) {
	c.cell.Reset()
	b, err := c.readByte()
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
		case b == '\r':
			c.next('\n') // CRLF, or a lone CR: either ends the row
			c.line++
			return c.cell.String(), true, nil
		case b == '"':
			return "", false, &CSVError{Line: c.line, Msg: "a quote inside an unquoted value"}
		}
		c.keep(b)
		if b, err = c.readByte(); err == io.EOF {
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
		b, err := c.readByte()
		if err == io.EOF {
			return "", false, &CSVError{Line: start, Msg: "a quoted value is not closed"}
		}
		if err != nil {
			return "", false, err
		}
		// A line break inside the value is kept as it is and counted as the lines outside
		// quotes are: CRLF, LF or a lone CR.
		if b == '\n' || b == '\r' && !c.followedBy('\n') {
			c.line++
		}
		if b != '"' {
			c.keep(b)
			continue
		}
		if c.next('"') {
			c.keep('"')
			continue
		}
		// The closing quote: a comma or the row's end must follow.
		after, err := c.readByte()
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
		case after == '\r':
			c.next('\n')
			c.line++
			return c.cell.String(), true, nil
		}
		return "", false, &CSVError{Line: c.line, Msg: fmt.Sprintf("%q after a closing quote, want a comma or the row's end", after)}
	}
}
