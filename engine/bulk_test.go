package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"credo/engine"
	"credo/resources"
)

// taskDescriptor is a resource that refers to itself, with a unique member and a write check.
const taskDescriptor = `name: Task
table: tasks
key: [TaskIdentifier]
fields:
  - {name: TaskIdentifier, type: uuid}
  - {name: ParentIdentifier, type: uuid, nullable: true, references: Task}
  - {name: TaskCode, type: string, required: true}
unique:
  - [TaskCode]
hooks:
  authorize: [task-check]
`

const (
	taskStored = "0190a6f0-0000-7000-8000-0000000000c0"
	taskOne    = "0190a6f0-0000-7000-8000-0000000000c1"
	taskTwo    = "0190a6f0-0000-7000-8000-0000000000c2"
	taskThree  = "0190a6f0-0000-7000-8000-0000000000c3"
	taskNone   = "0190a6f0-0000-7000-8000-0000000000cf"
)

// TestInsertFromChecksAcrossChunks: a load read in chunks (3 rows here) reports every problem of
// the file with its row, exactly as one pass over the whole file did, and writes nothing when
// there is one, though earlier chunks were written: a key or unique value repeating a row of
// an earlier chunk is a repeat of that row (never "already has", though the row is written by
// then); one stored before the load is "already has", on its repeats too; a reference to a row
// of a later chunk holds and one to no row nor stored record does not; a problem, a row the
// source could not decode or a write check's refusal in the last chunk leaves the table as it
// was; a dry run writes nothing.
func TestInsertFromChecksAcrossChunks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yaml"), []byte(taskDescriptor), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Load(resources.FS, os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	task := reg.MustByName("Task")
	engine.SetBulkChunk(t, 3)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		all := engine.AllOrganizations()
		drafts := func(rows ...string) []engine.Draft {
			t.Helper()
			ds, err := task.DecodeArray([]byte("[" + strings.Join(rows, ",") + "]"))
			if err != nil {
				t.Fatal(err)
			}
			return ds
		}
		count := func() int {
			t.Helper()
			n, err := s.Count(ctx, task, engine.Query{}, all)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		problems := func(err error) []string {
			t.Helper()
			var bulk *engine.BulkError
			if !errors.As(err, &bulk) {
				t.Fatalf("%v, want a BulkError", err)
			}
			var out []string
			for _, r := range bulk.Problems.List() {
				out = append(out, strings.Join([]string{strconv.Itoa(r.Row), r.Member, r.Msg}, " | "))
			}
			return out
		}
		if err := s.InsertAll(ctx, task, drafts(`{"TaskIdentifier":"`+taskStored+`","TaskCode":"OLD"}`), all); err != nil {
			t.Fatal(err)
		}

		err := s.InsertAll(ctx, task, drafts(
			`{"TaskIdentifier":"`+taskOne+`","TaskCode":"A"}`,
			`{"TaskCode":"B"}`,
			`{"TaskCode":"C"}`,
			`{"TaskIdentifier":"`+taskOne+`","TaskCode":"D"}`, // chunk 2: row 0 is written by now
			`{"TaskCode":"A"}`,
			`{"TaskIdentifier":"`+taskStored+`","TaskCode":"E"}`,
			`{"TaskCode":"OLD"}`, // chunk 3
			`{"TaskCode":"OLD"}`,
			`{"TaskCode":"F","ParentIdentifier":"`+taskNone+`"}`,
			`{}`,
		), all)
		want := []string{
			"3 | TaskIdentifier | TaskIdentifier " + taskOne + " repeats row 0",
			"4 | TaskCode | TaskCode A repeats row 0",
			"5 | TaskIdentifier | another Task already has TaskIdentifier " + taskStored,
			"6 | TaskCode | another Task already has TaskCode OLD",
			"7 | TaskCode | TaskCode OLD repeats row 6",
			"7 | TaskCode | another Task already has TaskCode OLD",
			"8 | ParentIdentifier | ParentIdentifier " + taskNone + " names no Task",
			"9 | TaskCode | TaskCode is required",
		}
		if got := problems(err); !reflect.DeepEqual(got, want) {
			t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if n := count(); n != 1 {
			t.Errorf("%d tasks after a refused load, want 1", n)
		}

		// References to rows of later chunks, and to a stored record, hold; a dangling one
		// (in the first and the last chunk) does not, and nothing is written.
		forward := []string{
			`{"TaskIdentifier":"` + taskOne + `","TaskCode":"P1","ParentIdentifier":"` + taskThree + `"}`,
			`{"TaskCode":"P2","ParentIdentifier":"` + taskOne + `"}`,
			`{"TaskCode":"P3","ParentIdentifier":"` + taskStored + `"}`,
			`{"TaskIdentifier":"` + taskTwo + `","TaskCode":"P4"}`,
			`{"TaskCode":"P5","ParentIdentifier":"` + taskTwo + `"}`,
			`{"TaskCode":"P6"}`,
			`{"TaskIdentifier":"` + taskThree + `","TaskCode":"P7","ParentIdentifier":"` + taskOne + `"}`,
		}
		dangling := append([]string{`{"TaskCode":"D1","ParentIdentifier":"` + taskNone + `"}`}, forward...)
		dangling = append(dangling, `{"TaskCode":"D2","ParentIdentifier":"`+taskNone+`"}`)
		want = []string{
			"0 | ParentIdentifier | ParentIdentifier " + taskNone + " names no Task",
			"8 | ParentIdentifier | ParentIdentifier " + taskNone + " names no Task",
		}
		if got := problems(s.InsertAll(ctx, task, drafts(dangling...), all)); !reflect.DeepEqual(got, want) {
			t.Errorf("dangling references:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if n := count(); n != 1 {
			t.Errorf("%d tasks after a load with dangling references, want 1", n)
		}

		// A problem in the last chunk only: the chunks before it, written, are rolled back.
		want = []string{"7 | TaskCode | TaskCode is required"}
		if got := problems(s.InsertAll(ctx, task, drafts(append(forward, `{}`)...), all)); !reflect.DeepEqual(got, want) {
			t.Errorf("a problem in the last chunk: %q, want %q", got, want)
		}
		if n := count(); n != 1 {
			t.Errorf("%d tasks after a load with a problem in its last chunk, want 1", n)
		}

		// A dry run checks and writes nothing.
		n, err := s.InsertFrom(ctx, task, engine.Drafts(drafts(forward...)), all, engine.BulkOptions{DryRun: true})
		if err != nil || n != len(forward) {
			t.Fatalf("dry run: %d, %v", n, err)
		}
		if n := count(); n != 1 {
			t.Errorf("%d tasks after a dry run, want 1", n)
		}

		// Rows the source could not decode (zero Drafts) are skipped, keeping their index;
		// the other rows' problems are all reported, and nothing is written.
		ds := drafts(forward...)
		ds[1], ds[5] = engine.Draft{}, engine.Draft{}
		ds = append(ds, drafts(`{"TaskCode":"P1"}`, `{"TaskCode":"P2"}`)...)
		var rows []int
		var bulk *engine.BulkError
		n, err = s.InsertFrom(ctx, task, engine.Drafts(ds), all, engine.BulkOptions{Progress: func(n int) { rows = append(rows, n) }})
		if !errors.As(err, &bulk) || bulk.Undecoded != 2 || n != 9 {
			t.Errorf("undecoded rows: %d, %v, want 2 undecoded of 9", n, err)
		}
		// Row 1 (P2) was not decoded: row 8 repeats no row.
		if got, want := problems(err), []string{"7 | TaskCode | TaskCode P1 repeats row 0"}; !reflect.DeepEqual(got, want) {
			t.Errorf("undecoded rows: problems %q, want %q", got, want)
		}
		if !reflect.DeepEqual(rows, []int{4, 8, 9}) { // a chunk is 3 decoded rows
			t.Errorf("progress %v, want the rows read after each chunk", rows)
		}
		if n := count(); n != 1 {
			t.Errorf("%d tasks after a load with undecoded rows, want 1", n)
		}

		// A write check's refusal of a row of the last chunk writes nothing, and is returned
		// as it is, with its row.
		refused := errors.New("no P7")
		checked := engine.WithWriteCheck(ctx, task, func(_ context.Context, _ *engine.Store, r *engine.Resource, old, rec engine.Record) error {
			if rec.Get(r, "TaskCode") == "P7" {
				return refused
			}
			return nil
		})
		if err := s.InsertAll(checked, task, drafts(forward...), all); !errors.Is(err, refused) || !strings.Contains(err.Error(), "row 6: no P7") {
			t.Errorf("refused by the write check: %v", err)
		}
		if n := count(); n != 1 {
			t.Errorf("%d tasks after a refused load, want 1", n)
		}

		if err := s.InsertAll(ctx, task, drafts(forward...), all); err != nil {
			t.Fatalf("forward references: %v", err)
		}
		if n := count(); n != 1+len(forward) {
			t.Errorf("%d tasks after the load, want %d", n, 1+len(forward))
		}
	})
}

// TestInsertFromSourceError: an error of the source other than io.EOF ends the load and
// rolls back what earlier chunks wrote.
func TestInsertFromSourceError(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	engine.SetBulkChunk(t, 2)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		broken := errors.New("the file broke")
		i := 0
		next := func() (engine.Draft, error) {
			i++
			if i == 6 {
				return engine.Draft{}, broken
			}
			if i > 6 {
				return engine.Draft{}, io.EOF
			}
			ds, err := w.DecodeArray([]byte("[" + widget("S"+strconv.Itoa(i), "") + "]"))
			if err != nil {
				t.Fatal(err)
			}
			return ds[0], nil
		}
		if _, err := s.InsertFrom(ctx, w, next, engine.AllOrganizations(), engine.BulkOptions{}); !errors.Is(err, broken) {
			t.Errorf("%v, want the source's error", err)
		}
		if n, _ := s.Count(ctx, w, engine.Query{}, engine.AllOrganizations()); n != 0 {
			t.Errorf("%d widgets after a broken load, want 0", n)
		}
	})
}

// pairDescriptor has a unique constraint of two strings, whose values may hold the ", " that
// a load's messages put between a tuple's values.
const pairDescriptor = `name: Pair
table: pairs
key: [PairIdentifier]
fields:
  - {name: PairIdentifier, type: uuid}
  - {name: First, type: string}
  - {name: Second, type: string}
unique:
  - [First, Second]
`

// TestInsertFromTellsTuplesApartByValue: ("a, b", "c") and ("a", "b, c") are two tuples of a
// unique constraint, which the database and two creates take; a load, in one chunk or in two,
// took the second for a repeat of the first, as both read "a, b, c". With one of them stored,
// the load of the other is no repeat either, and a true repeat of the stored one still is.
func TestInsertFromTellsTuplesApartByValue(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pairs.yaml"), []byte(pairDescriptor), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Load(resources.FS, os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	pair := reg.MustByName("Pair")
	drafts := func(rows ...string) []engine.Draft {
		t.Helper()
		ds, err := pair.DecodeArray([]byte("[" + strings.Join(rows, ",") + "]"))
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	ab, c := `{"First":"a, b","Second":"c"}`, `{"First":"a","Second":"b, c"}`
	for _, chunk := range []int{2, 1} {
		engine.SetBulkChunk(t, chunk)
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			eachStore(t, reg, func(t *testing.T, s *engine.Store) {
				ctx := context.Background()
				all := engine.AllOrganizations()
				if err := s.InsertAll(ctx, pair, drafts(ab, c), all); err != nil {
					t.Fatalf("two distinct pairs: %v", err)
				}
			})
			eachStore(t, reg, func(t *testing.T, s *engine.Store) {
				ctx := context.Background()
				all := engine.AllOrganizations()
				if err := s.InsertAll(ctx, pair, drafts(c, `{"First":"x","Second":"y"}`), all); err != nil {
					t.Fatal(err)
				}
				err := s.InsertAll(ctx, pair, drafts(`{"First":"z","Second":"z"}`, ab, c), all)
				var bulk *engine.BulkError
				if !errors.As(err, &bulk) || len(bulk.Problems.List()) != 1 || bulk.Problems.List()[0].Row != 2 ||
					bulk.Problems.List()[0].Msg != "another Pair already has First, Second a, b, c" {
					t.Errorf("a pair beside a stored one that reads alike: %v, want row 2 only", err)
				}
				if err := s.InsertAll(ctx, pair, drafts(`{"First":"z","Second":"z"}`, ab), all); err != nil {
					t.Errorf("a pair that reads as a stored one: %v", err)
				}
			})
		})
	}
}

// TestInsertFromStopsWhenCancelled: a load whose context is cancelled (credo load's Ctrl-C or
// SIGTERM) writes nothing, whether the cancellation comes amid the rows or once all are read.
// On PostgreSQL statements do not see the cancellation (see Store.Transaction), and a load
// interrupted there ran on and committed every row.
func TestInsertFromStopsWhenCancelled(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	engine.SetBulkChunk(t, 2)
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		for _, at := range []int{3, 6} { // amid the second chunk; at the end of the rows
			ctx, cancel := context.WithCancel(context.Background())
			i := 0
			next := func() (engine.Draft, error) {
				i++
				if i == at {
					cancel()
				}
				if i > 5 {
					return engine.Draft{}, io.EOF
				}
				ds, err := w.DecodeArray([]byte("[" + widget(fmt.Sprintf("X%d-%d", at, i), "") + "]"))
				if err != nil {
					t.Fatal(err)
				}
				return ds[0], nil
			}
			if _, err := s.InsertFrom(ctx, w, next, engine.AllOrganizations(), engine.BulkOptions{}); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled at row %d: %v, want context.Canceled", at, err)
			}
			cancel()
			if n, _ := s.Count(context.Background(), w, engine.Query{}, engine.AllOrganizations()); n != 0 {
				t.Errorf("cancelled at row %d: %d widgets, want 0", at, n)
			}
		}
	})
}
