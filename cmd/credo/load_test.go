package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

const (
	widgetA  = "0190a6f0-0000-7000-8000-0000000000a1"
	widgetB  = "0190a6f0-0000-7000-8000-0000000000a2"
	widgetC  = "0190a6f0-0000-7000-8000-0000000000a3"
	orgOne   = "0190a6f0-0000-7000-8000-00000000000a"
	orgTwo   = "0190a6f0-0000-7000-8000-00000000000b"
	nowhere  = "0190a6f0-0000-7000-8000-0000000000ff"
	partOne  = "0190a6f0-0000-7000-8000-0000000000b1"
	fixtures = "../../testdata/descriptors/fixture"
)

// TestLoadReportsEveryProblem: one run reports every problem of the file, one per line with
// its row index — types, required members, rules, keys and unique constraints repeated in the
// file or already in the partition, declared references — and writes nothing; --dry-run
// checks a good file without writing it.
func TestLoadReportsEveryProblem(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			load := func(resource, name, content string, extra ...string) (int, string, string) {
				t.Helper()
				file := filepath.Join(dir, name)
				if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				args := append([]string{"load", "--database", b.URL, "--partition", p, "--descriptors", fixtures, "--resource", resource}, extra...)
				return cli(t, append(args, file)...)
			}
			code, out, stderr := load("Widget", "good.json", `[{"WidgetIdentifier":"`+widgetA+`","OrganizationIdentifier":"`+orgOne+`","WidgetCode":"A"},`+
				`{"WidgetIdentifier":"`+widgetB+`","OrganizationIdentifier":"`+orgOne+`","WidgetCode":"B"}]`)
			if code != 0 || !strings.Contains(out, "loaded 2 Widget") {
				t.Fatalf("good widgets: %d %s %s", code, out, stderr)
			}
			code, _, stderr = load("Widget", "bad.json", `[
				{"OrganizationIdentifier":"`+orgOne+`","WidgetCode":"S","WidgetSize":"big"},
				{"OrganizationIdentifier":"`+orgOne+`"},
				{"OrganizationIdentifier":"`+orgOne+`","WidgetCode":"E","WidgetEmail":"not-an-email"},
				{"WidgetIdentifier":"`+widgetC+`","OrganizationIdentifier":"`+orgOne+`","WidgetCode":"X1"},
				{"OrganizationIdentifier":"`+orgOne+`","WidgetCode":"X1"},
				{"WidgetIdentifier":"`+widgetA+`","OrganizationIdentifier":"`+orgOne+`","WidgetCode":"Z"},
				{"WidgetIdentifier":"`+widgetC+`","OrganizationIdentifier":"`+orgOne+`","WidgetCode":"X2"},
				{"OrganizationIdentifier":"`+orgOne+`","WidgetCode":"B"},
				{"OrganizationIdentifier":"`+orgTwo+`","WidgetCode":"B"}]`)
			want := []string{
				"row 0: WidgetSize",
				"row 1: WidgetCode is required",
				"row 2: WidgetEmail",
				"row 4: OrganizationIdentifier, WidgetCode " + orgOne + ", X1 repeats row 3",
				"row 5: another Widget already has WidgetIdentifier " + widgetA,
				"row 6: WidgetIdentifier " + widgetC + " repeats row 3",
				// A unique constraint of two members, against the stored widgets; row 8's
				// pair is new (another organization).
				"row 7: another Widget already has OrganizationIdentifier, WidgetCode " + orgOne + ", B",
				"7 problem(s); nothing was written",
			}
			if code != 1 {
				t.Errorf("bad widgets: exit %d, want 1", code)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			for _, w := range want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the report does not say %q:\n%s", w, stderr)
				}
			}
			if len(lines) != len(want) {
				t.Errorf("the report has %d lines, want one per problem and a summary (%d):\n%s", len(lines), len(want), stderr)
			}

			parts := `[{"PartIdentifier":"` + partOne + `","PartName":"a","WidgetIdentifier":"` + widgetA + `"},` +
				`{"PartName":"b","WidgetIdentifier":"` + nowhere + `"},{"PartName":"c"}]`
			if code, _, stderr := load("WidgetPart", "parts.json", parts); code != 1 ||
				!strings.Contains(stderr, "row 1: WidgetIdentifier "+nowhere+" names no Widget") || strings.Contains(stderr, "row 0") || strings.Contains(stderr, "row 2") {
				t.Errorf("a part naming no widget: %d %s", code, stderr)
			}
			good := `[{"PartIdentifier":"` + partOne + `","PartName":"a","WidgetIdentifier":"` + widgetA + `"},{"PartName":"c"}]`
			if code, out, stderr := load("WidgetPart", "parts-good.json", good, "--dry-run"); code != 0 || !strings.Contains(out, "dry run: 2 WidgetPart record(s) would be loaded") {
				t.Fatalf("dry run: %d %s %s", code, out, stderr)
			}
			// The dry run wrote nothing: the same file, with its explicit key, loads.
			if code, out, stderr := load("WidgetPart", "parts-good.json", good); code != 0 || !strings.Contains(out, "loaded 2 WidgetPart") {
				t.Fatalf("load after the dry run: %d %s %s", code, out, stderr)
			}
			if code, _, stderr := load("WidgetPart", "parts-good.json", good, "--dry-run"); code != 1 || !strings.Contains(stderr, "another WidgetPart already has PartIdentifier") {
				t.Errorf("dry run of a file already loaded: %d %s", code, stderr)
			}
		})
	}
}

// TestLoadRowNamesEveryProblem: a row, JSON or CSV, whose member does not parse is reported
// with every other problem of its members (a required member it omits, a validate rule), and
// the member that did not parse is not also missing; the row's key is still judged against
// the other rows (both stores).
func TestLoadRowNamesEveryProblem(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			for _, file := range []struct{ name, content string }{
				{"rows.json", `[{"OrganizationIdentifier":"` + orgOne + `","WidgetCode":"A"},` +
					`{"WidgetSize":"big","WidgetEmail":"not-an-email","WidgetMade":"9999-12-31T23:00:00-02:00"},` +
					`{"OrganizationIdentifier":7,"WidgetCode":"B"}]`},
				{"rows.csv", "OrganizationIdentifier,WidgetCode,WidgetSize,WidgetEmail,WidgetMade\n" +
					orgOne + ",A,,,\n" +
					",,big,not-an-email,9999-12-31T23:00:00-02:00\n" +
					"nope,B,,,\n"},
			} {
				path := filepath.Join(dir, file.name)
				if err := os.WriteFile(path, []byte(file.content), 0o644); err != nil {
					t.Fatal(err)
				}
				code, _, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--descriptors", fixtures, "--resource", "Widget", path)
				want := []string{
					"row 1: OrganizationIdentifier is required",
					"row 1: WidgetCode is required",
					`row 1: WidgetEmail does not satisfy "email"`,
					"row 1: WidgetMade ",
					"row 1: WidgetSize ",
					"row 2: OrganizationIdentifier ",
					"6 problem(s); nothing was written",
				}
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				if code != 1 || len(lines) != len(want) {
					t.Errorf("%s: exit %d, %d lines, want 1 and %d:\n%s", file.name, code, len(lines), len(want), stderr)
					continue
				}
				for i, w := range want {
					if !strings.Contains(lines[i], w) {
						t.Errorf("%s: line %d is %q, want %q", file.name, i, lines[i], w)
					}
				}
				if strings.Contains(stderr, "row 2: OrganizationIdentifier is required") {
					t.Errorf("%s: a member that did not parse is also reported missing:\n%s", file.name, stderr)
				}
			}
		})
	}
}

// TestLoadRefusesCredentials: the tables of signing keys, client secrets and issued and
// revoked tokens are never loaded, by name, path or table.
func TestLoadRefusesCredentials(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rows.json")
	os.WriteFile(file, []byte(`[]`), 0o644)
	data := "sqlite:" + t.TempDir()
	for _, name := range []string{"SigningKey", "signing_keys", "ClientSecret", "client_secrets", "IssuedToken", "RevokedToken", "revoked_tokens"} {
		code, _, stderr := cli(t, "load", "--database", data, "--partition", "e01", "--resource", name, file)
		if code != 1 || !strings.Contains(stderr, "holds credentials") {
			t.Errorf("load %s: %d %q", name, code, stderr)
		}
	}
	_, _, stderr := cli(t, "load", "--database", data, "--partition", "e01", "--resource", "Nope", file)
	if strings.Contains(stderr, "SigningKey") || strings.Contains(stderr, "ClientSecret") {
		t.Errorf("the list of known resources offers credentials: %s", stderr)
	}
}

// loaded opens the partition a load wrote, with the descriptors of fsys, to read it back.
func loaded(t *testing.T, url, partition string, fsys ...fs.FS) (*engine.Registry, *engine.Store) {
	t.Helper()
	reg, err := engine.Load(fsys...)
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(context.Background(), url, []string{partition}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, _ := db.Store(partition)
	return reg, st
}

// TestLoadCSVKeepsValues: a CSV value holding a CRLF, a lone CR, a line feed, quotes, commas
// and blanks at its ends loads byte for byte (encoding/csv's reader, used before, turned the
// CRLF into LF), rows may end with LF, and a malformed file is refused naming its line.
func TestLoadCSVKeepsValues(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			file := filepath.Join(dir, "widgets.csv")
			data := engine.AppendCSVRow(nil, []string{"WidgetIdentifier", "OrganizationIdentifier", "WidgetCode", "WidgetTitle"})
			data = engine.AppendCSVRow(data, []string{widgetA, orgOne, "K1", testenv.CSVValue})
			data = append(data, widgetB+","+orgOne+",K2,plain\n"...)
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"load", "--database", b.URL, "--partition", p, "--descriptors", fixtures, "--resource", "Widget"}
			if code, out, stderr := cli(t, append(args, file)...); code != 0 || !strings.Contains(out, "loaded 2 Widget") {
				t.Fatalf("load: %d %s %s", code, out, stderr)
			}
			reg, st := loaded(t, b.URL, p, resources.FS, os.DirFS(fixtures))
			w := reg.MustByName("Widget")
			for id, want := range map[string]string{widgetA: testenv.CSVValue, widgetB: "plain"} {
				rec, err := st.Get(context.Background(), w, []any{id}, nil, engine.AllOrganizations())
				if err != nil {
					t.Fatal(err)
				}
				if got := rec.Get(w, "WidgetTitle"); got != want {
					t.Errorf("WidgetTitle %q, want %q", got, want)
				}
			}

			bad := filepath.Join(dir, "bad.csv")
			if err := os.WriteFile(bad, []byte("WidgetCode,WidgetTitle\nK3,\"open\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, _, stderr := cli(t, append(args, bad)...); code == 0 || !strings.Contains(stderr, "line 2, column 2 (WidgetTitle): a quoted value is not closed") {
				t.Errorf("malformed CSV: exit %d, %s", code, stderr)
			}

			// A wrong header is one problem, not one per row, and nothing is loaded.
			header := filepath.Join(dir, "header.csv")
			rows := "WidgetCode,Bogus,WidgetCode\n" + strings.Repeat("K9,x,K9\n", 3)
			if err := os.WriteFile(header, []byte(rows), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := cli(t, append(args, header)...)
			if code != 1 || !strings.Contains(stderr, "CSV header (line 1)") ||
				strings.Count(stderr, "Bogus is not a member of Widget") != 1 ||
				strings.Count(stderr, "WidgetCode is given more than once") != 1 {
				t.Errorf("a wrong header: exit %d, %s", code, stderr)
			}
			if n, err := st.Count(context.Background(), w, engine.Query{}, engine.AllOrganizations()); err != nil || n != 2 {
				t.Errorf("after a refused header: %d widgets (%v), want the 2 loaded before", n, err)
			}
		})
	}
}

// TestLoadStreamsTheFile: a file of several chunks (the engine checks and writes 5,000 rows at
// a time), CSV or JSON, is read row by row: a row repeating a row of an earlier chunk and a
// row that does not decode are both reported, and nothing is written; the same rows without
// them load; malformed JSON after rows already written loads nothing.
func TestLoadStreamsTheFile(t *testing.T) {
	const rows = 12000
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			write := func(name string, data []byte) string {
				t.Helper()
				file := filepath.Join(dir, name)
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
				return file
			}
			csvRows := func(code func(i int) string, size func(i int) string) []byte {
				data := []byte("WidgetCode,OrganizationIdentifier,WidgetSize\n")
				for i := range rows {
					data = fmt.Appendf(data, "%s,%s,%s\n", code(i), orgOne, size(i))
				}
				return data
			}
			jsonRows := func(code func(i int) string) []byte {
				data := []byte("[")
				for i := range rows {
					if i > 0 {
						data = append(data, ",\n"...)
					}
					data = fmt.Appendf(data, `{"WidgetCode":%q,"OrganizationIdentifier":%q}`, code(i), orgOne)
				}
				return append(data, ']')
			}
			plain := func(i int) string { return fmt.Sprintf("C%d", i) }
			repeat := func(i int) string {
				if i == 11500 {
					return "C7"
				}
				return plain(i)
			}
			noSize := func(int) string { return "" }
			badSize := func(i int) string {
				if i == 6000 {
					return "big"
				}
				return ""
			}
			args := []string{"load", "--database", b.URL, "--partition", p, "--descriptors", fixtures, "--resource", "Widget"}
			load := func(file string, extra ...string) (int, string, string) {
				t.Helper()
				return cli(t, append(append(args, extra...), file)...)
			}
			for _, file := range []string{write("bad.csv", csvRows(repeat, badSize)), write("bad.json", jsonRows(repeat))} {
				code, _, stderr := load(file)
				want := []string{"row 11500: OrganizationIdentifier, WidgetCode " + orgOne + ", C7 repeats row 7"}
				if strings.HasSuffix(file, ".csv") {
					want = append([]string{"row 6000: WidgetSize"}, want...)
				}
				want = append(want, fmt.Sprintf("%d problem(s); nothing was written", len(want)))
				if code != 1 || len(strings.Split(strings.TrimSpace(stderr), "\n")) != len(want) {
					t.Errorf("%s: exit %d, want 1 and %d lines:\n%s", file, code, len(want), stderr)
				}
				for _, w := range want {
					if !strings.Contains(stderr, w) {
						t.Errorf("%s: the report does not say %q:\n%s", file, w, stderr)
					}
				}
			}
			truncated := jsonRows(plain)
			truncated = append(truncated[:len(truncated)-1], `,{"WidgetCode":`...)
			if code, _, stderr := load(write("truncated.json", truncated)); code != 1 ||
				!strings.Contains(stderr, fmt.Sprintf("the file must be a JSON array of Widget objects: row %d, byte ", rows)) {
				t.Errorf("truncated JSON: exit %d, %s; want the row it ends in", code, stderr)
			}
			if code, _, stderr := load(write("trailing.json", append(jsonRows(plain), "[]"...))); code != 1 || !strings.Contains(stderr, "something follows the array") {
				t.Errorf("JSON after the array: exit %d, %s", code, stderr)
			}
			if code, out, stderr := load(write("good.csv", csvRows(plain, noSize)), "--dry-run"); code != 0 || !strings.Contains(out, fmt.Sprintf("dry run: %d Widget record(s) would be loaded", rows)) {
				t.Fatalf("dry run: %d %s %s", code, out, stderr)
			}
			// A byte order mark, as spreadsheet programs write, is skipped before JSON (found
			// by its extension or by its bracket) as before CSV.
			for _, f := range []string{write("bom.json", append([]byte("\ufeff"), jsonRows(plain)...)), write("bom.txt", append([]byte("\ufeff"), jsonRows(plain)...)),
				write("bom.csv", append([]byte("\ufeff"), csvRows(plain, noSize)...))} {
				if code, out, stderr := load(f, "--dry-run"); code != 0 || !strings.Contains(out, fmt.Sprintf("dry run: %d Widget record(s) would be loaded", rows)) {
					t.Errorf("%s with a byte order mark: %d %s %s", filepath.Base(f), code, out, stderr)
				}
			}
			// Nothing was written: every row of the good file loads.
			if code, out, stderr := load(filepath.Join(dir, "good.csv")); code != 0 || !strings.Contains(out, fmt.Sprintf("loaded %d Widget", rows)) {
				t.Fatalf("good CSV: %d %s %s", code, out, stderr)
			}
			more := jsonRows(func(i int) string { return fmt.Sprintf("J%d", i) })
			if code, out, stderr := load(write("more", more)); code != 0 || !strings.Contains(out, fmt.Sprintf("loaded %d Widget", rows)) {
				t.Fatalf("good JSON without .json: %d %s %s", code, out, stderr)
			}
		})
	}
}

// TestLoadKeepsPermissionAuditMembers: credo load writes as the process, without a caller, so
// a permission's read-only audit members (PermissionGrantedBy, PermissionGranted,
// OrganizationIdentifier) are the file's, JSON or CSV, as a migration of the original's grants
// needs; a row without them has none (null, and the nil UUID). PermissionMask is still derived
// from the flags (the permission-mask hook runs on every write).
func TestLoadKeepsPermissionAuditMembers(t *testing.T) {
	const (
		group   = "0190a6f0-0000-7000-8000-000000000601"
		grantor = "0190a6f0-0000-7000-8000-000000000101"
		granted = "2019-05-06T07:08:09.1234567+02:00"
		permA   = "0190a6f0-0000-7000-8000-0000000000c1"
		permB   = "0190a6f0-0000-7000-8000-0000000000c2"
		permC   = "0190a6f0-0000-7000-8000-0000000000c3"
	)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			p := testenv.Partition(t)
			load := func(name, content string) {
				t.Helper()
				file := filepath.Join(dir, name)
				if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				if code, out, stderr := cli(t, "load", "--database", b.URL, "--partition", p, "--resource", "Permission", file); code != 0 || !strings.Contains(out, "loaded") {
					t.Fatalf("load %s: %d %s %s", name, code, out, stderr)
				}
			}
			load("permissions.json", `[{"PermissionIdentifier":"`+permA+`","GroupIdentifier":"`+group+`","ObjectIdentifier":"`+widgetA+
				`","AllowRead":true,"PermissionMask":999,"OrganizationIdentifier":"`+orgOne+`","PermissionGrantedBy":"`+grantor+
				`","PermissionGranted":"`+granted+`"},`+
				`{"PermissionIdentifier":"`+permC+`","GroupIdentifier":"`+group+`","ObjectIdentifier":"`+widgetC+`","AllowRead":true}]`)
			load("permissions.csv", "PermissionIdentifier,GroupIdentifier,ObjectIdentifier,AllowRead,PermissionMask,OrganizationIdentifier,PermissionGrantedBy,PermissionGranted\n"+
				permB+","+group+","+widgetB+",true,999,"+orgTwo+","+grantor+","+granted+"\n")

			reg, st := loaded(t, b.URL, p, resources.FS)
			perm := reg.MustByName("Permission")
			when, _ := engine.ParseDateTime(granted)
			for _, tc := range []struct {
				id, org string
				by, at  any
			}{
				{permA, orgOne, grantor, when},
				{permB, orgTwo, grantor, when},
				{permC, "00000000-0000-0000-0000-000000000000", nil, nil},
			} {
				rec, err := st.Get(context.Background(), perm, []any{tc.id}, nil, engine.AllOrganizations())
				if err != nil {
					t.Fatal(err)
				}
				got := fmt.Sprint(rec.Get(perm, "OrganizationIdentifier"), rec.Get(perm, "PermissionGrantedBy"), rec.Get(perm, "PermissionGranted"), rec.Get(perm, "PermissionMask"))
				if want := fmt.Sprint(tc.org, tc.by, tc.at, int64(2)); got != want {
					t.Errorf("%s: organization, grantor, time, mask %s, want %s", tc.id, got, want)
				}
			}
		})
	}
}
