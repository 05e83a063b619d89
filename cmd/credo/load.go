package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"credo/engine"
	"credo/handlers"
)

// maxRowBytes bounds a row of a file (a CSV row, its line end included; a JSON array element)
// as the API bounds a create's body: a record the API could not take in one request is not
// loaded either, and memory holds one row of at most this many bytes however long a line of
// the file is.
const maxRowBytes = handlers.MaxBodyBytes

const loadDoc = `Load FILE into one record group or internal table of one partition, through the API's
validation, all or nothing.

FILE is a JSON array of records, or CSV (RFC 4180; lines end with CRLF, LF or a lone CR, as
spreadsheets read them) with a header row of member names; an empty cell is an omitted member, and every other value is kept byte for
byte, line breaks inside quotes included. A row (a CSV row, a JSON array element) is at most
1 MiB, as a request body is. Every row is checked in one pass, and the problems reported one
per line with the 0-based row index (the first 1,000 by row, then a count of the others): members that do not parse as their type (U+0000 and invalid UTF-8
included), required members, rules, keys and unique constraints repeated within the file or
already in the partition, references that the descriptor declares, CSV rows over 1 MiB or
of another number of cells than the header (with their line), and JSON elements over 1 MiB
(with their byte). Malformed CSV or JSON ends the
load at once, naming the row, the line or byte, and the column. Any problem: nothing is
written, exit status 1.

The file is read as it is checked and written, 5,000 rows at a time, in one transaction: memory
holds one chunk and a hash of each key and unique value of the file, not the file. On SQLite
that transaction holds the partition's writer from the first row's checks to the end: other
writes to the partition wait for it (at most the database timeout). --dry-run writes nothing
and holds no writer.

Tables of credentials (signing keys, client secrets, issued and revoked tokens) are refused:
credo writes them itself (credo secret).`

// load reads a JSON array or a CSV file into one resource of one partition.
func load(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	cfg := newConfig()
	fs := newFlags("load", "credo load [flags] FILE", loadDoc)
	partition := cfg.partitionFlag(fs.FlagSet, "partition to load into")
	resource := fs.String("resource", "", "record name, group path or table, e.g. User, security/users, users (required)")
	dryRun := fs.Bool("dry-run", false, "check the file against the partition and write nothing")
	cfg.databaseFlags(fs.FlagSet)
	cfg.descriptorFlags(fs.FlagSet)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.args(1, 1); err != nil {
		return err
	}
	if *resource == "" {
		return fs.usage("--resource is required")
	}
	if err := cfg.finish(); err != nil {
		return err
	}
	p, err := partition()
	if err != nil {
		return err
	}
	reg, err := cfg.registry()
	if err != nil {
		return err
	}
	r, ok := reg.ByName(*resource)
	if !ok {
		var names []string
		for _, x := range reg.Resources() {
			if !x.Credentials {
				names = append(names, x.Name)
			}
		}
		return fmt.Errorf("unknown resource %q; known: %s", *resource, strings.Join(names, ", "))
	}
	if r.Credentials {
		return fmt.Errorf("%s holds credentials: credo writes it itself and does not load it (use credo secret)", r.Name)
	}
	file := fs.Arg(0)
	f, stop, err := openInput(ctx, file)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: stopped (%w) before the file opened; nothing was written", file, err)
		}
		return err
	}
	defer f.Close()
	defer stop()
	rows, err := newRowReader(r, file, f)
	if ctx.Err() != nil {
		return stoppedLoad(ctx, file, 0)
	}
	if err != nil {
		return fmt.Errorf("%s: %w; nothing was written", file, err)
	}
	db, err := cfg.openDatabase(ctx, reg)
	if err != nil {
		return err
	}
	defer db.Close()
	store, _ := db.Store(p)
	progress := newProgress(stderr, fmt.Sprintf("load %s into %s", r.Name, p), rows.share)
	progress.show(0)
	n, err := store.InsertFrom(ctx, r, rows.next, engine.AllOrganizations(), engine.BulkOptions{DryRun: *dryRun, Progress: progress.show})
	progress.done()
	if ctx.Err() != nil {
		// What the signal cut short (a read, a statement) is not what went wrong.
		return stoppedLoad(ctx, file, n)
	}
	if rows.err != nil {
		return fmt.Errorf("%s: %w; nothing was written", file, rows.err)
	}
	var bulk *engine.BulkError
	if errors.As(err, &bulk) {
		rows.problems.Merge(&bulk.Problems, nil)
		return report(file, &rows.problems, stderr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if *dryRun {
		fmt.Fprintf(stdout, "dry run: %d %s record(s) would be loaded into %s; nothing was written\n", n, r.Name, p)
		return nil
	}
	fmt.Fprintf(stdout, "loaded %d %s record(s) into %s\n", n, r.Name, p)
	return nil
}

// stoppedLoad is the error of a load that a signal stopped after n rows were read: the same
// words on both stores, whichever read or statement the signal ended (SQLite's statements
// fail with "context canceled", PostgreSQL's run on).
func stoppedLoad(ctx context.Context, file string, n int) error {
	return fmt.Errorf("%s: stopped (%w) after %d row(s) read; nothing was written", file, context.Cause(ctx), n)
}

// report prints the problems on stderr, one per line in row order (a line break that a value
// quoted in a problem holds is escaped, as what does not print is, in the file's name too):
// the first engine.MaxRowProblems, then a line counting the others. It returns the command's
// error, which counts every problem and row.
func report(file string, problems *engine.RowProblems, stderr io.Writer) error {
	name := printable(strings.ReplaceAll(file, "\n", `\n`))
	for _, p := range problems.List() {
		if p.Row < 0 {
			fmt.Fprintf(stderr, "%s: %s\n", name, printable(strings.ReplaceAll(p.Msg, "\n", `\n`)))
			continue
		}
		fmt.Fprintf(stderr, "%s: row %d: %s\n", name, p.Row, printable(strings.ReplaceAll(p.Msg, "\n", `\n`)))
	}
	if more := problems.Unlisted(); more != "" {
		fmt.Fprintf(stderr, "%s: … %s\n", name, more)
	}
	return fmt.Errorf("%s: %d problem(s); nothing was written", file, problems.Len())
}

// rowReader reads a file's rows one at a time, as the engine's RowSource (next): JSON (a
// .json file or one starting with '[') element by element (jsonRows), or CSV row by row. An
// element that is not a JSON object, and a row or element longer than maxRowBytes, is the
// zero Draft, its problem kept in problems; the problems of
// a row's members ride in its draft, which the engine reports with the row's others
// (required, null, validate rules, keys, references); malformed JSON or CSV ends the rows
// with err.
type rowReader struct {
	r *engine.Resource
	// read returns the next row's draft or its problem (problem), or ends the rows (err).
	read     func() (d engine.Draft, problem, err error)
	row      int
	problems engine.RowProblems
	err      error
	// share is the share of the file read so far, in percent; -1 when its size is unknown.
	share func() int
}

// newRowReader reads the start of the file in f (the opening bracket, or the CSV header).
func newRowReader(r *engine.Resource, name string, f *os.File) (*rowReader, error) {
	counted := &countingReader{r: f}
	var size int64 = -1
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	rr := &rowReader{r: r, share: func() int {
		if size <= 0 {
			return -1
		}
		return int(min(100, counted.n*100/size))
	}}
	br := bufio.NewReaderSize(counted, 64<<10)
	skipBOM(br)
	if strings.EqualFold(filepath.Ext(name), ".json") || startsWithBracket(br) {
		return rr, rr.startJSON(br)
	}
	return rr, rr.startCSV(br)
}

// skipBOM skips a UTF-8 byte order mark at the start of a file, which spreadsheet programs
// write before CSV and JSON alike; neither format has a use for it.
func skipBOM(br *bufio.Reader) {
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3) // buffered by Peek
	}
}

// startsWithBracket reports whether the first byte after white space is '['.
func startsWithBracket(br *bufio.Reader) bool {
	for n := 1; n <= br.Size(); n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return false
		}
		switch c := b[n-1]; {
		case c == '[':
			return true
		case c != ' ' && c != '\t' && c != '\n' && c != '\r':
			return false
		}
		if err != nil {
			return false
		}
	}
	return false
}

func (rr *rowReader) startCSV(br *bufio.Reader) error {
	cr := engine.NewCSVReader(br, maxRowBytes)
	header, err := cr.Read()
	switch {
	case err == io.EOF:
		return fmt.Errorf("the file is empty: want a CSV header row of %s member names, or a JSON array", rr.r.Name)
	case err != nil:
		return fmt.Errorf("CSV header: %w", err)
	}
	h, err := rr.r.CSVHeader(header)
	if err != nil {
		return fmt.Errorf("CSV header (line 1): %w", err)
	}
	rr.read = func() (engine.Draft, error, error) {
		cells, err := cr.Read()
		var bad *engine.CSVError
		switch {
		case err == io.EOF:
			return engine.Draft{}, nil, io.EOF
		case errors.As(err, &bad) && bad.Skipped:
			// A row too long or of another number of cells: read past, and reported with
			// the file's other problems.
			return engine.Draft{}, fmt.Errorf("%s: %s", csvWhere(bad, header), bad.Msg), nil
		case errors.As(err, &bad):
			return engine.Draft{}, nil, fmt.Errorf("%w: row %d, %s: %s", engine.ErrCSV, rr.row, csvWhere(bad, header), bad.Msg)
		case err != nil:
			return engine.Draft{}, nil, fmt.Errorf("read row %d: %w", rr.row, err)
		}
		return h.DecodeRow(cells), nil, nil
	}
	return nil
}

// csvWhere names where a CSV problem is: its line, and the column and member of its cell.
func csvWhere(e *engine.CSVError, header []string) string {
	if e.Cell < 0 {
		return fmt.Sprintf("line %d", e.Line)
	}
	where := fmt.Sprintf("line %d, column %d", e.Line, e.Cell+1)
	if e.Cell < len(header) {
		where += " (" + header[e.Cell] + ")"
	}
	return where
}

// next is the engine's RowSource: the next row's draft, the zero Draft for a row with
// problems, io.EOF at the end.
func (rr *rowReader) next() (engine.Draft, error) {
	d, problem, err := rr.read()
	if err != nil {
		if err != io.EOF {
			rr.err = err
		}
		return engine.Draft{}, err
	}
	if problem != nil {
		rr.problems.AddError(rr.row, problem)
		d = engine.Draft{}
	}
	rr.row++
	return d, nil
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// progress rewrites one line on a terminal; elsewhere (a file, a pipe) it writes nothing. The
// number of rows is not known before the file is read: it shows the rows read and the
// share of the file's bytes.
type progress struct {
	w     io.Writer
	what  string
	share func() int
}

func newProgress(w io.Writer, what string, share func() int) *progress {
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return &progress{w: w, what: what, share: share}
		}
	}
	return &progress{}
}

func (p *progress) show(rows int) {
	if p.w == nil {
		return
	}
	if share := p.share(); share >= 0 {
		fmt.Fprintf(p.w, "\r%s: %d records (%d%% of the file)", p.what, rows, share)
		return
	}
	fmt.Fprintf(p.w, "\r%s: %d records", p.what, rows)
}

func (p *progress) done() {
	if p.w != nil {
		fmt.Fprintln(p.w)
	}
}
