package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"credo/engine"
	"credo/internal/testenv"
)

// manual builds a WidgetManual record for InsertWithContent.
func manual(r *engine.Resource, code string, edition int64) func(int64) (engine.Draft, error) {
	return func(int64) (engine.Draft, error) {
		return r.DecodeDraft(fmt.Appendf(nil, `{"WidgetCode":%q,"Edition":%d,"ManualTitle":"Manual"}`, code, edition))
	}
}

// writeAll is a fill that writes data in uneven pieces, as an encoder would.
func writeAll(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		for len(data) > 0 {
			n := min(len(data), 1+len(data)%7919)
			if _, err := w.Write(data[:n]); err != nil {
				return err
			}
			data = data[n:]
		}
		return nil
	}
}

// chunkRows counts the content rows of a record (or of every record with key nil) directly.
func chunkRows(t *testing.T, s *engine.Store, code string) int64 {
	t.Helper()
	table := `"widget_manual_chunks"`
	if s.Dialect() == engine.Postgres {
		table = `"` + s.Partition + `".` + table
	}
	var n int64
	q := "SELECT count(*) FROM " + table
	var args []any
	if code != "" {
		q += ` WHERE "widget_code" = ?`
		args = append(args, code)
	}
	if err := s.DB(context.Background()).Raw(q, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestContentRoundTrip stores streams of lengths around the chunk boundaries and reads them
// back whole and from random offsets, as http.ServeContent does for ranges.
func TestContentRoundTrip(t *testing.T) {
	reg := fixtureRegistry(t)
	r := reg.MustByName("WidgetManual")
	ctx := context.Background()
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		rng := rand.New(rand.NewPCG(1, 2))
		for i, size := range []int{0, 1, engine.ChunkSize - 1, engine.ChunkSize, engine.ChunkSize + 1, 3*engine.ChunkSize + 17} {
			data := make([]byte, size)
			for j := range data {
				data[j] = byte(rng.IntN(256))
			}
			code := fmt.Sprintf("size-%d", size)
			rec, err := s.InsertWithContent(ctx, r, []any{code, int64(i)}, writeAll(data), manual(r, code, int64(i)))
			if err != nil {
				t.Fatalf("size %d: %v", size, err)
			}
			if got := rec.Get(r, "ManualTitle"); got != "Manual" {
				t.Errorf("size %d: record %v", size, rec)
			}
			if want := max(1, (size+engine.ChunkSize-1)/engine.ChunkSize); chunkRows(t, s, code) != int64(want) {
				t.Errorf("size %d: %d chunks, want %d", size, chunkRows(t, s, code), want)
			}
			c, err := s.OpenContent(ctx, r, []any{code, int64(i)})
			if err != nil {
				t.Fatalf("size %d: open: %v", size, err)
			}
			if c.Size() != int64(size) {
				t.Errorf("size %d: Size %d", size, c.Size())
			}
			got, err := io.ReadAll(c)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("size %d: read %d bytes, %v; not what was written", size, len(got), err)
			}
			for range 20 {
				if size == 0 {
					break
				}
				off := rng.IntN(size)
				n := min(size-off, 1+rng.IntN(2*engine.ChunkSize))
				if _, err := c.Seek(int64(off), io.SeekStart); err != nil {
					t.Fatal(err)
				}
				part := make([]byte, n)
				if _, err := io.ReadFull(c, part); err != nil || !bytes.Equal(part, data[off:off+n]) {
					t.Fatalf("size %d: %d bytes at %d: %v; not what was written", size, n, off, err)
				}
			}
			if end, _ := c.Seek(0, io.SeekEnd); end != int64(size) {
				t.Errorf("size %d: Seek end = %d", size, end)
			}
			if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("size %d: read at the end: %d, %v; want EOF", size, n, err)
			}
		}
	})
}

// TestContentVisibleOnlyWhenComplete checks that the record does not exist while its content
// is written, and that a write that fails anywhere leaves neither record nor chunks.
func TestContentVisibleOnlyWhenComplete(t *testing.T) {
	reg := fixtureRegistry(t)
	r := reg.MustByName("WidgetManual")
	ctx := context.Background()
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		big := bytes.Repeat([]byte("0123456789abcdef"), engine.ChunkSize/8) // two chunks
		fill := func(w io.Writer) error {
			if err := writeAll(big)(w); err != nil {
				return err
			}
			if n := chunkRows(t, s, "during"); n == 0 {
				t.Error("no chunk written before the end of the fill")
			}
			if found, err := s.Exists(ctx, r, []any{"during", int64(1)}, engine.AllOrganizations()); err != nil || found {
				t.Errorf("record visible while its content is written: %v %v", found, err)
			}
			return nil
		}
		if _, err := s.InsertWithContent(ctx, r, []any{"during", int64(1)}, fill, manual(r, "during", 1)); err != nil {
			t.Fatal(err)
		}
		if found, _ := s.Exists(ctx, r, []any{"during", int64(1)}, engine.AllOrganizations()); !found {
			t.Error("record missing after a complete write")
		}

		boom := errors.New("boom")
		failures := []struct {
			name   string
			fill   func(io.Writer) error
			record func(int64) (engine.Draft, error)
		}{
			{name: "fill fails after a chunk", fill: func(w io.Writer) error { _ = writeAll(big)(w); return boom }, record: manual(r, "failed", 1)},
			{name: "record fails", fill: writeAll(big), record: func(int64) (engine.Draft, error) { return engine.Draft{}, boom }},
			{name: "record invalid", fill: writeAll(big), record: func(int64) (engine.Draft, error) {
				d, _ := r.DecodeDraft([]byte(`{"WidgetCode":"failed","Edition":1}`))
				return d, nil
			}},
			{name: "record of another key", fill: writeAll(big), record: manual(r, "other", 1)},
			{name: "key already taken", fill: writeAll(big), record: manual(r, "during", 1)},
		}
		for _, tc := range failures {
			key := []any{"failed", int64(1)}
			if tc.name == "key already taken" {
				key = []any{"during", int64(1)}
			}
			if _, err := s.InsertWithContent(ctx, r, key, tc.fill, tc.record); err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			if n := chunkRows(t, s, "failed"); n != 0 {
				t.Errorf("%s: %d chunks left behind", tc.name, n)
			}
		}
		if found, _ := s.Exists(ctx, r, []any{"failed", int64(1)}, engine.AllOrganizations()); found {
			t.Error("a failed write left a record")
		}
		// The write on a taken key failed at its first chunk and left the owner's content.
		c, err := s.OpenContent(ctx, r, []any{"during", int64(1)})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(c); err != nil || !bytes.Equal(got, big) {
			t.Errorf("the content of the taken key changed: %d bytes, %v", len(got), err)
		}
	})
}

// TestContentDeletedWithRecord checks that Delete removes the content in its transaction and
// that a record without content reads as ErrNotFound.
func TestContentDeletedWithRecord(t *testing.T) {
	reg := fixtureRegistry(t)
	r := reg.MustByName("WidgetManual")
	ctx := context.Background()
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		for _, code := range []string{"a", "b"} {
			if _, err := s.InsertWithContent(ctx, r, []any{code, int64(2)}, writeAll([]byte("text of "+code)), manual(r, code, 2)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Delete(ctx, r, []any{"a", int64(2)}, engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if n := chunkRows(t, s, "a"); n != 0 {
			t.Errorf("%d chunks left after Delete", n)
		}
		if _, err := s.OpenContent(ctx, r, []any{"a", int64(2)}); !engine.IsNotFound(err) {
			t.Errorf("OpenContent after Delete: %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, r, []any{"a", int64(2)}, engine.AllOrganizations()); !engine.IsNotFound(err) {
			t.Errorf("second Delete: %v, want ErrNotFound", err)
		}
		c, err := s.OpenContent(ctx, r, []any{"b", int64(2)})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(c); string(got) != "text of b" {
			t.Errorf("the other record's content: %q", got)
		}
		if _, err := s.DeleteWhere(ctx, r, "ManualTitle", "Manual"); err == nil {
			t.Error("DeleteWhere on a resource with content: no error (its content would stay)")
		}
		// DeleteMatching removes the matching records with their content, and only those.
		if _, err := s.InsertWithContent(ctx, r, []any{"c", int64(3)}, writeAll([]byte("text of c")), func(int64) (engine.Draft, error) {
			return r.DecodeDraft([]byte(`{"WidgetCode":"c","Edition":3,"ManualTitle":"Other"}`))
		}); err != nil {
			t.Fatal(err)
		}
		title, _ := r.Member("ManualTitle")
		n, err := s.DeleteMatching(ctx, r, engine.Query{Conds: []engine.Cond{{Field: title, Op: engine.MatchEq, Value: "Manual"}}}, engine.AllOrganizations())
		if err != nil || n != 1 {
			t.Fatalf("DeleteMatching: %d, %v; want 1", n, err)
		}
		if chunkRows(t, s, "b") != 0 || chunkRows(t, s, "c") != 1 {
			t.Errorf("after DeleteMatching: b has %d chunks, c %d; want 0 and 1", chunkRows(t, s, "b"), chunkRows(t, s, "c"))
		}
	})
}

// TestPurgeContent leaves chunks that a record owns, however old, and young orphans, and
// removes orphans older than ContentOrphanAge.
func TestPurgeContent(t *testing.T) {
	reg := fixtureRegistry(t)
	r := reg.MustByName("WidgetManual")
	ctx := context.Background()
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		if _, err := s.InsertWithContent(ctx, r, []any{"owned", int64(1)}, writeAll([]byte("kept")), manual(r, "owned", 1)); err != nil {
			t.Fatal(err)
		}
		// Orphans: writes whose record never came (their processes died in between).
		table := `"widget_manual_chunks"`
		if s.Dialect() == engine.Postgres {
			table = `"` + s.Partition + `".` + table
		}
		now := time.Now()
		for code, written := range map[string]time.Time{"young": now, "old": now.Add(-engine.ContentOrphanAge - time.Minute)} {
			if err := s.DB(ctx).Exec(`INSERT INTO `+table+` ("widget_code", "edition", "seq", "data", "written") VALUES (?, 1, 0, ?, ?)`,
				code, []byte("lost"), written.Unix()).Error; err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.PurgeContent(ctx, r, now)
		if err != nil || n != 1 || chunkRows(t, s, "old") != 0 || chunkRows(t, s, "young") != 1 {
			t.Fatalf("PurgeContent now: %d, %v; want the old orphan only removed", n, err)
		}
		n, err = s.PurgeContent(ctx, r, now.Add(engine.ContentOrphanAge+time.Minute))
		if err != nil || n != 1 || chunkRows(t, s, "young") != 0 {
			t.Fatalf("PurgeContent later: %d, %v; want the other orphan removed", n, err)
		}
		if chunkRows(t, s, "owned") != 1 {
			t.Error("PurgeContent removed a record's content")
		}
	})
}

// TestContentDescriptorErrors checks the content key's rules at load.
func TestContentDescriptorErrors(t *testing.T) {
	const base = "name: Doc\ntable: docs\nkey: [DocId]\nfields:\n  - {name: DocId, type: uuid}\n"
	tests := []struct{ name, yaml, want string }{
		{name: "not an identifier", yaml: base + "content: Doc-Chunks\n", want: `content "Doc-Chunks" must be a lower-case SQL identifier`},
		{name: "public group", yaml: strings.Replace(base, "table: docs\n", "table: docs\npath: test/docs\noperations: [get]\n", 1) + "content: doc_chunks\n", want: "content is for internal tables only"},
		{name: "taken table", yaml: base + "content: docs\n", want: "content table docs is also used by"},
		{name: "key column taken", yaml: "name: Doc\ntable: docs\nkey: [Seq]\ncontent: doc_chunks\nfields:\n  - {name: Seq, type: int}\n", want: "column seq is taken by the content table"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.Load(fstest.MapFS{"doc.yaml": {Data: []byte(tc.yaml)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestContentCompressedWithLZ4 checks that on PostgreSQL the chunks are compressed with lz4,
// not pglz (three times slower to write a CSV export), and that migrating again, as every
// replica does at start, keeps it so without error.
func TestContentCompressedWithLZ4(t *testing.T) {
	reg := fixtureRegistry(t)
	url, p := testenv.Postgres(t), testenv.Partition(t)
	ctx := context.Background()
	for range 2 {
		db, err := engine.Open(ctx, url, []string{p}, reg)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := db.Store(p)
		var method string
		err = s.DB(ctx).Raw(`SELECT attcompression::text FROM pg_attribute
			WHERE attrelid = ?::regclass AND attname = 'data'`, p+".widget_manual_chunks").Scan(&method).Error
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if method != "l" {
			t.Fatalf("chunk column compression %q, want l (lz4)", method)
		}
	}
}
