package engine

import (
	"database/sql"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// scanner reads rows of a projection into Records, reusing its destinations between rows.
type scanner struct {
	r      *Resource
	fields []*Field
	dests  []any
}

func newScanner(r *Resource, fields []*Field) *scanner {
	sc := &scanner{r: r, fields: fields, dests: make([]any, len(fields))}
	// One array per destination type rather than one allocation per column.
	var bools []sql.NullBool
	var ints []sql.NullInt64
	var uuids []uuidCell
	strs := make([]sql.NullString, len(fields))
	for i, f := range fields {
		switch f.Type {
		case TypeUUID:
			if uuids == nil {
				uuids = make([]uuidCell, len(fields))
			}
			sc.dests[i] = &uuids[i]
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
			sc.dests[i] = &strs[i]
		}
	}
	return sc
}

// scan reads the current row into a new Record.
func (sc *scanner) scan(rows rowSet) (Record, error) {
	if err := rows.Scan(sc.dests...); err != nil {
		return nil, fmt.Errorf("scan %s: %w", sc.r.Name, err)
	}
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
		case *uuidCell:
			if d.Valid {
				rec[f.Index] = d.String
			}
		case *sql.NullString:
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
	case *sql.NullString:
		if d.Valid {
			return d.String
		}
	case *uuidCell:
		if d.Valid {
			return d.String
		}
	}
	return nil
}

// uuidCell is the destination of a uuid column: the canonical text of the uuid. pgx hands it
// the 16 bytes (pgtype.UUIDScanner), formatted once; through database/sql (SQLite's text, GORM)
// it scans as a string. A sql.NullString alone made pgx format the text and copy it again.
type uuidCell struct{ sql.NullString }

func (c *uuidCell) ScanUUID(v pgtype.UUID) error {
	c.Valid = v.Valid
	c.String = ""
	if v.Valid {
		c.String = uuid.UUID(v.Bytes).String()
	}
	return nil
}

var (
	_ pgtype.UUIDScanner = (*uuidCell)(nil)
	_ sql.Scanner        = (*uuidCell)(nil)
)

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
