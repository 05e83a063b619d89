package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestLoadReadsLoneCRLines: a CSV file whose lines end with a lone CR (classic Mac, some Excel
// exports) loads row by row, its quoted values byte for byte (a lone CR, a CRLF and an LF
// inside quotes stay), where it read as one header row and was refused as "'\r' after a
// closing quote" or as a header of names holding a CR; a problem names the row and the line
// counted by those line ends (both stores).
func TestLoadReadsLoneCRLines(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			args := []string{"load", "--database", b.URL, "--partition", p, "--descriptors", fixtures, "--resource", "Widget"}
			write := func(name, content string) string {
				file := filepath.Join(dir, name)
				if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				return file
			}
			mac := write("mac.csv", "WidgetIdentifier,OrganizationIdentifier,WidgetCode,WidgetTitle\r"+
				widgetA+","+orgOne+",M1,\"one\rtwo\"\r"+
				widgetB+","+orgOne+",M2,\"p\r\nq\nr\"\r"+
				widgetC+","+orgOne+",M3,plain\r")
			if code, out, stderr := cli(t, append(args, mac)...); code != 0 || !strings.Contains(out, "loaded 3 Widget") {
				t.Fatalf("load: %d %s %s", code, out, stderr)
			}
			reg, st := loaded(t, b.URL, p, resources.FS, os.DirFS(fixtures))
			w := reg.MustByName("Widget")
			for id, want := range map[string]string{widgetA: "one\rtwo", widgetB: "p\r\nq\nr", widgetC: "plain"} {
				rec, err := st.Get(context.Background(), w, []any{id}, nil, engine.AllOrganizations())
				if err != nil {
					t.Fatal(err)
				}
				if got := rec.Get(w, "WidgetTitle"); got != want {
					t.Errorf("WidgetTitle %q, want %q", got, want)
				}
			}

			// Line 2-3 is row 0 (a CR inside quotes), line 4 row 1 of 2 cells.
			bad := write("mac-bad.csv", "WidgetCode,OrganizationIdentifier,WidgetTitle\rM4,"+orgOne+",\"a\rb\"\rM5,"+orgOne+"\r")
			code, _, stderr := cli(t, append(args, bad)...)
			if code != 1 || !strings.Contains(stderr, "row 1: line 4: 2 cells where the header (the first row) has 3") {
				t.Errorf("a short row in a CR file: exit %d, %s", code, stderr)
			}
			if n, err := st.Count(context.Background(), w, engine.Query{}, engine.AllOrganizations()); err != nil || n != 3 {
				t.Errorf("%d widgets (%v), want the 3 loaded", n, err)
			}
		})
	}
}
