package engine_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"credo/engine"
	"credo/resources"
)

// FuzzLoadCSV: a CSV file loaded into one of the descriptors' resources as `credo load` reads
// it (CSVReader, CSVHeader, DecodeRow, InsertFrom). Nothing panics; a malformed file is an
// ErrCSV, a header that names no member a *engine.ValidationError, and a load is accepted or
// refused as ErrInvalid or ErrConflict, never another error; a refused load writes nothing,
// and an accepted one reads back every cell given exactly as it was written (an empty cell is
// an omitted member).
func FuzzLoadCSV(f *testing.F) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		f.Fatal(err)
	}
	rs := writable(reg)
	for i, r := range rs {
		var names, cells []string
		for _, fl := range r.Fields {
			names = append(names, fl.Name)
			cells = append(cells, seedCell(fl))
		}
		f.Add(uint8(i), []byte(strings.Join(names, ",")+"\r\n"+strings.Join(cells, ",")+"\r\n"))
	}
	f.Add(uint8(0), []byte("Nope,Nope\r\n1,2\r\n"))
	stores := fuzzStores(f, reg)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		for _, s := range stores {
			loadCSV(t, s, rs[int(which)%len(rs)], data)
		}
	})
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
			if !equalValue(want, got[f.Index]) && !derived(r, f) {
				t.Errorf("%s %s: loaded %q, read back %#v", r.Name, name, cell, got[f.Index])
			}
		}
	}
}

// derived reports whether a beforeWrite hook sets f from other members (a permission's mask,
// a group's slug), so that a value a file gives is not what is stored.
func derived(r *engine.Resource, f *engine.Field) bool {
	return r.Name == "Permission" && f.Name == "PermissionMask" || r.Name == "Group" && f.Name == "GroupSlug"
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
		return strconv.ParseInt(cell, 10, 32)
	case engine.TypeDateTime:
		tm, err := time.Parse("2006-01-02T15:04:05.9999999Z07:00", cell)
		return engine.DateTime{Time: tm}, err
	}
	return nil, errors.New("unknown type")
}
