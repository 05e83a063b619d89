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

// TestLoadReadsPastLongJSONElements: a JSON array element longer than a row may be is a
// problem of its row naming its byte, its length and the limit, as a long CSV row is: the
// problems of the rows before and after it are reported with it, where the long element
// ended the load and theirs went unreported; nothing is written (both stores). What follows a
// long element is still checked as the array's: a comma before the closing bracket, text
// after it, and an element never closed end the load naming the row and byte.
func TestLoadReadsPastLongJSONElements(t *testing.T) {
	long := strings.Repeat("x", maxRowBytes)
	good := `{"WidgetCode":"J1","OrganizationIdentifier":"` + orgOne + `"}`
	content := "[ " + `{"OrganizationIdentifier":"` + orgOne + `"},` + // row 0: no WidgetCode
		"\n  " + `{"WidgetCode":"J2","WidgetTitle":"` + long + `"} ,` + // row 1: long, from byte 71
		`{"WidgetCode":"J3","WidgetSize":"big","OrganizationIdentifier":"` + orgOne + `"},` + // row 2
		good + `,"` + long + `",` + // rows 3 (good) and 4 (a long string)
		`{"WidgetCode":"J4","WidgetTitle":"` + long + `\"}"}]` + "\n" // row 5: long, an escaped quote
	row4 := strings.Index(content, `,"x`) + 1
	row5 := strings.LastIndex(content, `{"WidgetCode":"J4"`)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			load := func(name, content string) (int, string) {
				t.Helper()
				file := filepath.Join(dir, name)
				if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				code, _, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--descriptors", fixtures, "--resource", "Widget", file)
				return code, strings.ReplaceAll(stderr, dir+string(filepath.Separator), "")
			}
			code, stderr := load("long.json", content)
			want := strings.Join([]string{
				"long.json: row 0: WidgetCode is required",
				fmt.Sprintf("long.json: row 1: byte 71: the row is %d bytes long; a row is at most %d bytes", len(long)+36, maxRowBytes),
				"long.json: row 2: WidgetSize must be an integer",
				fmt.Sprintf("long.json: row 4: byte %d: the row is %d bytes long; a row is at most %d bytes", row4, len(long)+2, maxRowBytes),
				fmt.Sprintf("long.json: row 5: byte %d: the row is %d bytes long; a row is at most %d bytes", row5, len(long)+39, maxRowBytes),
				"credo load: long.json: 5 problem(s); nothing was written",
			}, "\n") + "\n"
			if code != 1 || stderr != want {
				t.Errorf("exit %d, stderr\n%s\nwant\n%s", code, stderr, want)
			}
			for _, c := range []struct{ name, content, want string }{
				{"trailing-comma.json", `[{"WidgetTitle":"` + long + `"},]`, fmt.Sprintf("row 1, byte %d: invalid character ']'", len(long)+20)},
				{"after.json", `[{"WidgetTitle":"` + long + `"}] x`, fmt.Sprintf("row 1, byte %d: something follows the array", len(long)+21)},
				{"unclosed.json", "[" + good + `, {"WidgetTitle":"` + long + `"`, fmt.Sprintf("row 1, byte %d: the element is not closed: unexpected EOF", len(good)+3)},
			} {
				code, stderr := load(c.name, c.content)
				if code != 1 || !strings.Contains(stderr, "the file must be a JSON array of Widget objects: "+c.want) {
					t.Errorf("%s: exit %d, %s; want %q", c.name, code, stderr, c.want)
				}
			}
			reg, st := loaded(t, b.URL, p, resources.FS, os.DirFS(fixtures))
			if n, err := st.Count(context.Background(), reg.MustByName("Widget"), engine.Query{}, engine.AllOrganizations()); err != nil || n != 0 {
				t.Errorf("%d widgets (%v), want none", n, err)
			}
		})
	}
}
