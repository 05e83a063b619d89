package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"credo/engine"
)

// FuzzLoadCSV: a CSV file loaded into one of the descriptors' resources as `credo load` reads
// it (CSVReader, CSVHeader, DecodeRow, InsertFrom). Nothing panics; a malformed file is an
// ErrCSV, a header that names no member a *engine.ValidationError, and a load is accepted or
// refused as ErrInvalid or ErrConflict, never another error; a refused load writes nothing,
// and an accepted one reads back every cell given exactly as it was written (an empty cell is
// an omitted member; an int cell as JSON writes it), every member it stores obeying the
// member rules (obeysRules).
func FuzzLoadCSV(f *testing.F) {
	reg := fuzzRegistry(f)
	rs := writable(reg)
	for i, r := range rs {
		f.Add(uint8(i), seedFile(r, "", ""))
		// An int cell is written as JSON writes an integer (engine.ParseInteger), as in a
		// body: strconv's spellings are refused; and a hook-derived member obeys the member
		// rules (SlugProbe's slug of a 26-letter name, past its 20).
		for _, fl := range r.Fields {
			if fl.Type == engine.TypeInt && fl.Stored() && !r.Derived(fl) {
				for _, cell := range []string{"+5", "007", "-0", " 5", "5.0", "٣", "2147483648"} {
					f.Add(uint8(i), seedFile(r, fl.Name, cell))
				}
			}
			if r.Name == "SlugProbe" && fl.Name == "GroupName" {
				f.Add(uint8(i), seedFile(r, fl.Name, "Abcdefghijklmnopqrstuvwxyz"))
			}
		}
	}
	f.Add(uint8(0), []byte("Nope,Nope\r\n1,2\r\n"))
	stores := fuzzStores(f, reg)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		for _, s := range stores {
			loadCSV(t, s, rs[int(which)%len(rs)], data)
		}
	})
}

// seedFile is a CSV file of one row of r giving every member a well-formed cell, but member
// (when not "") the cell given.
func seedFile(r *engine.Resource, member, cell string) []byte {
	var names, cells []string
	for _, fl := range r.Fields {
		names = append(names, fl.Name)
		if fl.Name == member {
			cells = append(cells, cell)
		} else {
			cells = append(cells, seedCell(fl))
		}
	}
	return []byte(strings.Join(names, ",") + "\r\n" + strings.Join(cells, ",") + "\r\n")
}

func seedCell(f *engine.Field) string {
	switch f.Type {
	case engine.TypeString:
		return `"Émilie, ""x"" <&>` + "\r\n" + `"`
	case engine.TypeUUID:
		return engine.NewID()
	case engine.TypeBool:
		return "TRUE"
	case engine.TypeInt:
		return "-2147483648"
	case engine.TypeDateTime:
		return "2024-03-10T14:30:00.1234567-06:00"
	}
	return ""
}

func loadCSV(t *testing.T, s *engine.Store, r *engine.Resource, data []byte) {
	ctx := context.Background()
	rows, err := readCSV(data)
	if err != nil {
		if !errors.Is(err, engine.ErrCSV) {
			t.Fatalf("read %q: %v, not an ErrCSV", data, err)
		}
		return
	}
	if len(rows) < 2 {
		return
	}
	h, err := r.CSVHeader(rows[0])
	if err != nil {
		var verr *engine.ValidationError
		if !errors.As(err, &verr) || len(verr.Fields) == 0 {
			t.Fatalf("header %q: %v, not a ValidationError naming a member", rows[0], err)
		}
		return
	}
	drafts := make([]engine.Draft, len(rows)-1)
	for i, cells := range rows[1:] {
		drafts[i] = h.DecodeRow(cells)
	}
	before, err := s.Count(ctx, r, engine.Query{}, engine.AllOrganizations())
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	_, err = s.InsertFrom(ctx, r, func() (engine.Draft, error) {
		if i == len(drafts) {
			return engine.Draft{}, io.EOF
		}
		i++
		return drafts[i-1], nil
	}, engine.AllOrganizations(), engine.BulkOptions{})
	if err != nil {
		refused(t, "load", data, err)
		after, cerr := s.Count(ctx, r, engine.Query{}, engine.AllOrganizations())
		if cerr != nil || after != before {
			t.Fatalf("a refused load of %q changed the count from %d to %d (%v)", data, before, after, cerr)
		}
		return
	}
	for n, d := range drafts {
		if d.Problems() != nil {
			t.Fatalf("load of %q accepted row %d with problems %v", data, n, d.Problems())
		}
		key := make([]any, len(r.Key))
		for k, kf := range r.Key {
			key[k] = d.Record()[kf.Index]
		}
		got, err := s.Get(ctx, r, key, nil, engine.AllOrganizations())
		if err != nil {
			t.Fatalf("get %s %v after loading %q: %v", r.Name, key, data, err)
		}
		obeysRules(t, r, "load", data, got)
		for c, name := range rows[0] {
			f, _ := r.Member(name)
			cell := rows[n+1][c]
			if cell == "" || !f.Stored() || f.WriteOnly || !f.Output {
				continue
			}
			want, err := cellValue(f, cell)
			if err != nil {
				t.Errorf("%s %s = %q was loaded, but it is no %s: %v", r.Name, name, cell, f.Type, err)
				continue
			}
			if !equalValue(want, got[f.Index]) && !r.Derived(f) {
				t.Errorf("%s %s: loaded %q, read back %#v", r.Name, name, cell, got[f.Index])
			}
		}
	}
}

// cellValue reads a CSV cell as the text of a member's type, with the standard library
// rather than the engine's parser.
func cellValue(f *engine.Field, cell string) (any, error) {
	switch f.Type {
	case engine.TypeString:
		return cell, nil
	case engine.TypeUUID:
		return strings.ToLower(cell), nil
	case engine.TypeBool:
		return strconv.ParseBool(strings.ToLower(cell))
	case engine.TypeInt:
		// JSON's spelling only: strconv also takes +5 and 007, which a body refuses.
		n, err := strconv.ParseInt(cell, 10, 32)
		if err == nil && strconv.FormatInt(n, 10) != cell && cell != "-0" {
			err = fmt.Errorf("%q is not written as JSON writes an integer", cell)
		}
		return n, err
	case engine.TypeDateTime:
		tm, err := time.Parse("2006-01-02T15:04:05.9999999Z07:00", cell)
		return engine.DateTime{Time: tm}, err
	}
	return nil, errors.New("unknown type")
}
