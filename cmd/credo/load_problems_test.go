package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestLoadListsTheFirstProblems: a file of thousands of bad rows — `;`-separated data under a
// `,` header, after rows the engine refuses — prints the first engine.MaxRowProblems problems
// by row, then one line counting the others and their rows, where it printed every one; the
// command's error counts them all, and nothing is written (both stores).
func TestLoadListsTheFirstProblems(t *testing.T) {
	const required, semicolons = 600, 2400 // rows refused by the engine, then by the reader
	var b strings.Builder
	b.WriteString("WidgetCode,OrganizationIdentifier,WidgetTitle\n")
	for range required {
		b.WriteString("," + orgOne + ",t\n") // no WidgetCode
	}
	for i := range semicolons {
		fmt.Fprintf(&b, "S%d;%s;t\n", i, orgOne)
	}
	fmt.Fprintf(&b, "G1,%s,good\n", orgOne)
	for _, be := range testenv.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			file := filepath.Join(t.TempDir(), "semicolons.csv")
			if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := cli(t, "load", "--database", be.URL, "--partition", p, "--descriptors", fixtures, "--resource", "Widget", file)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			var rows []string
			for _, l := range lines {
				if strings.Contains(l, ": row ") {
					rows = append(rows, l)
				}
			}
			if len(rows) != engine.MaxRowProblems {
				t.Fatalf("%d problems printed, want the first %d", len(rows), engine.MaxRowProblems)
			}
			for i, want := range map[int]string{
				0:                         "row 0: WidgetCode is required",
				required - 1:              fmt.Sprintf("row %d: WidgetCode is required", required-1),
				required:                  fmt.Sprintf("row %d: line %d: 1 cells where the header (the first row) has 3", required, required+2),
				engine.MaxRowProblems - 1: fmt.Sprintf("row %d: line %d: 1 cells", engine.MaxRowProblems-1, engine.MaxRowProblems+1),
			} {
				if !strings.Contains(rows[i], want) {
					t.Errorf("problem %d is %q, want %q", i, rows[i], want)
				}
			}
			total := required + semicolons
			for _, want := range []string{
				fmt.Sprintf("semicolons.csv: … and %d more problem(s) in %d more row(s), not listed", total-engine.MaxRowProblems, total-engine.MaxRowProblems),
				fmt.Sprintf("semicolons.csv: %d problem(s); nothing was written", total),
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n…%s", want, stderr[max(0, len(stderr)-500):])
				}
			}
			if len(lines) != engine.MaxRowProblems+2 {
				t.Errorf("%d lines on stderr, want %d", len(lines), engine.MaxRowProblems+2)
			}
			reg, st := loaded(t, be.URL, p, resources.FS, os.DirFS(fixtures))
			if n, err := st.Count(context.Background(), reg.MustByName("Widget"), engine.Query{}, engine.AllOrganizations()); err != nil || n != 0 {
				t.Errorf("%d widgets (%v), want none", n, err)
			}
		})
	}
}
