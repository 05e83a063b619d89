package engine

import (
	"database/sql"
	"encoding/hex"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// scanner reads rows of a projection into Records, reusing its destinations between rows.
type scanner struct {
	r      *Resource
	fields []*Field
	dests  []any
	texts  []*textCell // the destinations of the uuid and text columns
	row    rowText
}

func newScanner(r *Resource, fields []*Field) *scanner {
	sc := &scanner{r: r, fields: fields, dests: make([]any, len(fields))}
	// One array per destination type rather than one allocation per column.
	var bools []sql.NullBool
	var ints []sql.NullInt64
	texts := make([]textCell, len(fields))
	for i, f := range fields {
		switch f.Type {
		case TypeBool:
			if bools == nil {
				bools = make([]sql.NullBool, len(fields))
			}
			sc.dests[i] = &bools[i]
		case TypeInt:
			if ints == nil {
				ints = make([]sql.NullInt64, len(fields))
			}
			sc.dests[i] = &ints[i]
		default:
			texts[i].row = &sc.row
			sc.dests[i] = &texts[i]
			sc.texts = append(sc.texts, &texts[i])
		}
	}
	return sc
}

// scan reads the current row into a new Record.
func (sc *scanner) scan(rows rowSet) (Record, error) {
	sc.row.b = sc.row.b[:0]
	if err := rows.Scan(sc.dests...); err != nil {
		return nil, fmt.Errorf("scan %s: %w", sc.r.Name, err)
	}
	sc.finishTexts()
	rec := sc.r.NewRecord()
	for i, f := range sc.fields {
		switch d := sc.dests[i].(type) {
		case *sql.NullBool:
			if d.Valid {
				rec[f.Index] = d.Bool
			}
		case *sql.NullInt64:
			if d.Valid {
				rec[f.Index] = d.Int64
			}
		case *textCell:
			if !d.Valid {
				continue
			}
			if f.Type == TypeDateTime {
				dt, err := ParseStorage(d.String)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", sc.r.Name, f.Name, err)
				}
				rec[f.Index] = dt
			} else {
				rec[f.Index] = d.String
			}
		}
	}
	return rec, nil
}

// finishTexts gives the cells that pgx filled their text: the row's text is made one string,
// each cell's a part of it (one allocation per row instead of two or three per column).
func (sc *scanner) finishTexts() {
	if len(sc.row.b) == 0 {
		return
	}
	text := string(sc.row.b)
	for _, c := range sc.texts {
		if c.pending {
			c.String, c.pending = text[c.from:c.to], false
		}
	}
}

// stored returns the value the current row holds in the i-th column as the database stored
// it (a datetime's text, not the parsed DateTime): string, int64, bool or nil.
func (sc *scanner) stored(i int) any {
	switch d := sc.dests[i].(type) {
	case *sql.NullBool:
		if d.Valid {
			return d.Bool
		}
	case *sql.NullInt64:
		if d.Valid {
			return d.Int64
		}
	case *textCell:
		if d.Valid {
			return d.String
		}
	}
	return nil
}

// rowText collects the text of one row's cells as pgx hands them over.
type rowText struct{ b []byte }

// textCell is the destination of a uuid or text column. pgx hands it a uuid's 16 bytes
// (pgtype.UUIDScanner), formatted as the canonical text, or a text's bytes (pgtype.
// BytesScanner), which are pgx's buffer: both go to the row's text, which the scanner makes a
// string once the row is read (finishTexts). Through database/sql (SQLite, GORM) it scans as
// a sql.NullString. A sql.NullString alone took a string and an interface per column from
// pgx, and made a uuid's text twice.
type textCell struct {
	sql.NullString
	row      *rowText
	from, to int  // the cell's text in row.b
	pending  bool // the value is in row.b; String is not set yet
}

func (c *textCell) ScanUUID(v pgtype.UUID) error {
	c.String, c.Valid, c.pending = "", v.Valid, v.Valid
	if v.Valid {
		c.from = len(c.row.b)
		c.row.b = appendUUID(c.row.b, v.Bytes)
		c.to = len(c.row.b)
	}
	return nil
}

// ScanBytes takes a text column's value from pgx; src is nil for NULL.
func (c *textCell) ScanBytes(src []byte) error {
	c.String, c.Valid, c.pending = "", src != nil, src != nil
	if src != nil {
		c.from = len(c.row.b)
		c.row.b = append(c.row.b, src...)
		c.to = len(c.row.b)
	}
	return nil
}

// Scan takes database/sql's value.
func (c *textCell) Scan(v any) error {
	c.pending = false
	return c.NullString.Scan(v)
}

var (
	_ pgtype.UUIDScanner  = (*textCell)(nil)
	_ pgtype.BytesScanner = (*textCell)(nil)
	_ sql.Scanner         = (*textCell)(nil)
)

// appendUUID appends the canonical text of u (lower-case hex, 8-4-4-4-12).
func appendUUID(b []byte, u [16]byte) []byte {
	b = hex.AppendEncode(b, u[:4])
	for _, part := range [][]byte{u[4:6], u[6:8], u[8:10], u[10:]} {
		b = append(b, '-')
		b = hex.AppendEncode(b, part)
	}
	return b
}

// storageValue converts a record value into what the driver stores.
func storageValue(v any) any {
	if d, ok := v.(DateTime); ok {
		return d.Storage()
	}
	return v
}

// columnsOf maps a record's stored members to column values for INSERT and UPDATE.
func columnsOf(r *Resource, rec Record) map[string]any {
	m := make(map[string]any, len(r.Fields))
	for _, f := range r.Fields {
		m[f.Column] = storageValue(rec[f.Index])
	}
	return m
}
