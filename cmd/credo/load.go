package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"credo/engine"
)

const loadDoc = `Load FILE into one record group or internal table of one partition, through the API's
validation, all or nothing.

FILE is a JSON array of records, or CSV (RFC 4180, rows ended by CRLF or LF) with a header row
of member names; an empty cell is an omitted member, and every other value is kept byte for
byte, line breaks inside quotes included. Every problem of the file is reported in one pass, one per line with its
0-based row index: members that do not parse as their type, required members, rules, keys and
unique constraints repeated within the file or already in the partition, and references that
the descriptor declares. Any problem: nothing is written, exit status 1.

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
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	drafts, problems, err := decodeFile(r, file, data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	db, err := cfg.openDatabase(ctx, reg)
	if err != nil {
		return err
	}
	defer db.Close()
	store, _ := db.Store(p)
	progress := newProgress(stderr, fmt.Sprintf("load %s into %s", r.Name, p), len(drafts))
	if len(problems) > 0 || *dryRun {
		bulk, err := store.CheckAll(ctx, r, drafts, engine.AllOrganizations())
		if err != nil {
			return err
		}
		if bulk != nil {
			problems = append(problems, bulk.Rows...)
		}
		if len(problems) > 0 {
			return report(file, problems, stderr)
		}
		fmt.Fprintf(stdout, "dry run: %d %s record(s) would be loaded into %s; nothing was written\n", len(drafts), r.Name, p)
		return nil
	}
	progress.show(0)
	err = store.InsertAllProgress(ctx, r, drafts, engine.AllOrganizations(), progress.show)
	progress.done()
	var bulk *engine.BulkError
	if errors.As(err, &bulk) {
		return report(file, bulk.Rows, stderr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(stdout, "loaded %d %s record(s) into %s\n", len(drafts), r.Name, p)
	return nil
}

// report prints every problem on stderr, one per line in row order, and returns the
// command's error.
func report(file string, problems []engine.RowError, stderr io.Writer) error {
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Row < problems[j].Row })
	for _, p := range problems {
		if p.Row < 0 {
			fmt.Fprintf(stderr, "%s: %s\n", file, p.Msg)
			continue
		}
		fmt.Fprintf(stderr, "%s: row %d: %s\n", file, p.Row, p.Msg)
	}
	return fmt.Errorf("%s: %d problem(s); nothing was written", file, len(problems))
}

// decodeFile reads JSON (a .json file or one starting with '[') or CSV into drafts: drafts[i]
// is the zero Draft for a row with problems, which are returned, every one, rather than as an error.
func decodeFile(r *engine.Resource, name string, data []byte) ([]engine.Draft, []engine.RowError, error) {
	if strings.EqualFold(filepath.Ext(name), ".json") || bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, nil, fmt.Errorf("the file must be a JSON array of %s objects: %v", r.Name, err)
		}
		drafts := make([]engine.Draft, len(raws))
		var problems []engine.RowError
		for i, raw := range raws {
			d, err := r.DecodeDraft(raw)
			if err != nil {
				problems = append(problems, rowErrors(i, err)...)
				continue
			}
			drafts[i] = d
		}
		return drafts, problems, nil
	}
	cr := engine.NewCSVReader(bytes.NewReader(data))
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("read CSV header: %w", err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	var drafts []engine.Draft
	var problems []engine.RowError
	for row := 0; ; row++ {
		cells, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read CSV after row %d: %w", row-1, err)
		}
		d, err := r.DecodeRow(header, cells)
		if err != nil {
			problems = append(problems, rowErrors(row, err)...)
		}
		drafts = append(drafts, d)
	}
	return drafts, problems, nil
}

// rowErrors lists a row's decoding problems, one per member message.
func rowErrors(row int, err error) []engine.RowError {
	var verr *engine.ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) == 0 {
		return []engine.RowError{{Row: row, Msg: err.Error()}}
	}
	var out []engine.RowError
	for _, m := range verr.Members() {
		for _, msg := range verr.Fields[m] {
			out = append(out, engine.RowError{Row: row, Member: m, Msg: msg})
		}
	}
	return out
}

// progress rewrites one line on a terminal; elsewhere (a file, a pipe) it writes nothing.
type progress struct {
	w     io.Writer
	what  string
	total int
}

func newProgress(w io.Writer, what string, total int) *progress {
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return &progress{w: w, what: what, total: total}
		}
	}
	return &progress{}
}

func (p *progress) show(written int) {
	if p.w != nil && p.total > 0 {
		fmt.Fprintf(p.w, "\r%s: %d/%d records (%d%%)", p.what, written, p.total, written*100/p.total)
	}
}

func (p *progress) done() {
	if p.w != nil {
		fmt.Fprintln(p.w)
	}
}
