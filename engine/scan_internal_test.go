package engine

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

func TestAppendUUIDIsTheCanonicalText(t *testing.T) {
	cases := []uuid.UUID{uuid.Nil, uuid.Max, uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff")}
	for range 1000 {
		cases = append(cases, uuid.New())
	}
	for _, u := range cases {
		if got := string(appendUUID([]byte("x"), u)); got != "x"+u.String() {
			t.Fatalf("appendUUID(%s) = %s", u, got)
		}
	}
}

// The uuids and texts that pgx hands a scanner become the text of their cells, a NULL among
// them stays NULL, an empty text stays empty and not NULL, and a row's texts survive the
// next row's.
func TestScannerCollectsTheRowsText(t *testing.T) {
	sc := &scanner{}
	cells := make([]textCell, 4)
	for i := range cells {
		cells[i].row = &sc.row
		sc.texts = append(sc.texts, &cells[i])
	}
	type row struct {
		uuids [2]pgtype.UUID
		texts [2][]byte
	}
	rows := []row{
		{[2]pgtype.UUID{{Bytes: uuid.New(), Valid: true}, {}}, [2][]byte{[]byte("héllo"), nil}},
		{[2]pgtype.UUID{{Bytes: uuid.New(), Valid: true}, {Bytes: uuid.New(), Valid: true}}, [2][]byte{{}, []byte("x")}},
		{[2]pgtype.UUID{{}, {}}, [2][]byte{nil, nil}},
	}
	want := func(r row) []*string {
		var out []*string
		for _, u := range r.uuids {
			var s *string
			if u.Valid {
				text := uuid.UUID(u.Bytes).String()
				s = &text
			}
			out = append(out, s)
		}
		for _, b := range r.texts {
			var s *string
			if b != nil {
				text := string(b)
				s = &text
			}
			out = append(out, s)
		}
		return out
	}
	var kept [][]string
	for _, r := range rows {
		sc.row.b = sc.row.b[:0]
		for i, u := range r.uuids {
			if err := cells[i].ScanUUID(u); err != nil {
				t.Fatal(err)
			}
		}
		for i, b := range r.texts {
			buf := append([]byte(nil), b...) // pgx's buffer, overwritten after the row
			if b == nil {
				buf = nil
			} else if len(b) == 0 {
				buf = []byte{}
			}
			if err := cells[2+i].ScanBytes(buf); err != nil {
				t.Fatal(err)
			}
			for j := range buf {
				buf[j] = '#'
			}
		}
		sc.finishTexts()
		var texts []string
		for i, w := range want(r) {
			c := cells[i]
			if c.pending || c.Valid != (w != nil) || (w != nil && c.String != *w) {
				t.Fatalf("cell %d: %+v, want %v", i, c, w)
			}
			texts = append(texts, c.String)
		}
		kept = append(kept, texts)
	}
	for ri, r := range rows {
		for i, w := range want(r) {
			if w != nil && kept[ri][i] != *w {
				t.Errorf("row %d cell %d changed to %q after the later rows", ri, i, kept[ri][i])
			}
		}
	}
	if err := cells[0].Scan("text from database/sql"); err != nil || cells[0].String != "text from database/sql" || cells[0].pending {
		t.Errorf("Scan: %v %+v", err, cells[0])
	}
}
