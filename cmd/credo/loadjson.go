package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"credo/engine"
)

// jsonRows reads a JSON array file for a rowReader, element by element. An element longer
// than maxRowBytes is a problem of its row, as a CSV row is: it is read past without being
// kept (skipValue) and the elements after it are read and checked, so that one run reports
// every problem of the file. (It ended the load, and the problems of the rows before it went
// unreported.)
type jsonRows struct {
	rr  *rowReader
	dec *json.Decoder
	lim *jsonRowLimit
	// base is the byte of the file at the decoder's input offset 0: a decoder made to read on
	// past a long element starts in the middle of the file (see readPast).
	base int64
}

func (rr *rowReader) startJSON(br *bufio.Reader) error {
	j := &jsonRows{rr: rr}
	j.decode(br, 0)
	if tok, err := j.dec.Token(); err == io.EOF {
		return fmt.Errorf("the file is empty: want a JSON array of %s objects", rr.r.Name)
	} else if err != nil {
		return j.notArray(err)
	} else if tok != json.Delim('[') {
		return j.notArray(fmt.Errorf("it starts with %v", tok))
	}
	rr.read = j.read
	return nil
}

// decode reads on from r with a new decoder; base is the byte of the file r starts at.
func (j *jsonRows) decode(r io.Reader, base int64) {
	j.lim = &jsonRowLimit{r: r, limit: maxRowBytes}
	j.dec = json.NewDecoder(j.lim)
	j.lim.dec = j.dec
	j.base = base
}

// offset is the byte of the file the decoder is at.
func (j *jsonRows) offset() int64 { return j.base + j.dec.InputOffset() }

// notArray is the error of a file that is not a JSON array: it names the row it is in and
// its byte.
func (j *jsonRows) notArray(err error) error {
	return fmt.Errorf("the file must be a JSON array of %s objects: row %d, byte %d: %v", j.rr.r.Name, j.rr.row, j.offset(), err)
}

// read is the rowReader's read: the next element's draft, or its problem.
func (j *jsonRows) read() (engine.Draft, error, error) {
	if !j.dec.More() {
		if _, err := j.dec.Token(); err != nil { // the closing bracket
			return engine.Draft{}, nil, j.notArray(err)
		}
		if _, err := j.dec.Token(); err != io.EOF {
			return engine.Draft{}, nil, j.notArray(errors.New("something follows the array"))
		}
		return engine.Draft{}, nil, io.EOF
	}
	var raw json.RawMessage
	if err := j.dec.Decode(&raw); errors.Is(err, errRowTooLong) {
		problem, err := j.readPast()
		return engine.Draft{}, problem, err
	} else if err != nil {
		return engine.Draft{}, nil, j.notArray(err)
	}
	if len(raw) > maxRowBytes { // read whole by the decoder's last read
		return engine.Draft{}, tooLong(j.offset()-int64(len(raw)), int64(len(raw))), nil
	}
	d, problem := j.rr.r.DecodeFileDraft(raw)
	return d, problem, nil
}

// readPast reads past the element that the decoder found too long (its read failed with
// errRowTooLong, the element's start still in its buffer) and returns the element's problem;
// a decoder made to read on starts after it. err is an element never closed.
func (j *jsonRows) readPast() (problem, err error) {
	at := j.offset() // the start of the element, or the white space before it
	rest := bufio.NewReaderSize(io.MultiReader(j.dec.Buffered(), j.lim.r), 64<<10)
	space, n, err := skipValue(rest)
	if err != nil {
		return nil, fmt.Errorf("the file must be a JSON array of %s objects: row %d, byte %d: the element is not closed: %v", j.rr.r.Name, j.rr.row, at+space, err)
	}
	// The decoder reads on as if the element were 0, the first of an array: it checks what
	// follows (a comma and the next element, or the closing bracket) as the array's own.
	end := at + space + n
	j.decode(io.MultiReader(strings.NewReader("[0"), rest), end-2)
	var zero json.RawMessage
	if _, err := j.dec.Token(); err != nil {
		return nil, j.notArray(err)
	}
	if err := j.dec.Decode(&zero); err != nil {
		return nil, j.notArray(err)
	}
	return tooLong(at+space, n), nil
}

// tooLong is the problem of an element of n bytes from byte start of the file.
func tooLong(start, n int64) error {
	return fmt.Errorf("byte %d: the row is %d bytes long; a row is at most %d bytes", start, n, maxRowBytes)
}

// skipValue reads one JSON value from r, after white space, without keeping it: space is the
// white space's bytes, n the value's. It finds the value's end by its brackets and quotes
// only; what it reads is not checked further. An input that ends inside the value is
// io.ErrUnexpectedEOF.
func skipValue(r *bufio.Reader) (space, n int64, err error) {
	var c byte
	for {
		if c, err = r.ReadByte(); err != nil {
			return space, 0, io.ErrUnexpectedEOF
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		space++
	}
	n = 1
	depth := 0
	inString := false
	switch c {
	case '{', '[':
		depth = 1
	case '"':
		inString = true
	default: // a number or a literal: it ends where a delimiter begins
		for {
			if c, err = r.ReadByte(); err == io.EOF {
				return space, n, nil
			} else if err != nil {
				return space, n, err
			}
			if strings.IndexByte(" \t\r\n,]}", c) >= 0 {
				return space, n, r.UnreadByte()
			}
			n++
		}
	}
	for inString || depth > 0 {
		if c, err = r.ReadByte(); err != nil {
			return space, n, io.ErrUnexpectedEOF
		}
		n++
		switch {
		case inString && c == '\\':
			if _, err = r.ReadByte(); err != nil {
				return space, n, io.ErrUnexpectedEOF
			}
			n++
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return space, n, nil
}

// errRowTooLong is the error of a row longer than maxRowBytes.
var errRowTooLong = fmt.Errorf("the row is more than %d bytes long; a row is at most %d bytes", maxRowBytes, maxRowBytes)

// jsonRowLimit feeds a JSON decoder and fails its read (errRowTooLong) once the decoder holds
// more than limit bytes of the file past the start of the value it is reading: the element
// is longer than a row may be. The decoder buffers a whole element before decoding it; so it
// holds at most a few times limit, however long the element in the file. (An element that
// its last read completed can be a little longer than limit: the reader checks the element's
// length too.)
type jsonRowLimit struct {
	r     io.Reader
	dec   *json.Decoder
	read  int64 // bytes handed to the decoder
	limit int64
}

func (l *jsonRowLimit) Read(p []byte) (int, error) {
	if l.read-l.dec.InputOffset() > l.limit {
		return 0, errRowTooLong
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	return n, err
}
