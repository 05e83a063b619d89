package handlers_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"credo/internal/testenv"
)

// TestCSVKeepsValues stores a string that needs every kind of CSV quoting (a line feed, a CRLF
// and a CR inside, quotes, a comma, blanks at both ends) and reads it back byte for byte from
// list and search with Format=csv, with a strict RFC 4180 reader and with encoding/csv (which
// reads a CRLF inside a field as LF, and nothing else differently).
func TestCSVKeepsValues(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			body, _ := json.Marshal(map[string]any{"CommentCreatedBy": uuid.NewString(), "OrganizationIdentifier": uuid.NewString(),
				"UserIdentifier": uuid.NewString(), "CommentText": testenv.CSVValue})
			res := ts.do(t, "POST", "security/users-comments", string(body)).expect(t, "create", 201)
			var comment map[string]any
			_ = json.Unmarshal(res.body, &comment)
			id := comment["CommentIdentifier"].(string)
			blank := put(t, ts, reg.MustByName("UserComment"), map[string]any{"CommentCreatedBy": uuid.NewString(),
				"OrganizationIdentifier": uuid.NewString(), "UserIdentifier": uuid.NewString(), "CommentText": nil})

			gradebooks := reg.MustByName("Gradebook")
			gb := put(t, ts, gradebooks, map[string]any{"OrganizationIdentifier": uuid.NewString(), "GradebookTitle": testenv.CSVValue})

			for _, c := range []struct {
				name, path   string
				header, want []string
			}{
				{name: "list", path: "security/users-comments?Format=csv&Includes=CommentIdentifier,CommentText&Identifier=" + id,
					header: []string{"CommentIdentifier", "CommentText"}, want: []string{id, testenv.CSVValue}},
				{name: "list, one column", path: "security/users-comments?Format=csv&Includes=CommentText&Identifier=" + id,
					header: []string{"CommentText"}, want: []string{testenv.CSVValue}},
				{name: "list, one null column", path: "security/users-comments?Format=csv&Includes=CommentText&Identifier=" + blank["CommentIdentifier"].(string),
					header: []string{"CommentText"}, want: []string{""}},
				{name: "search", path: "progress/gradebooks/search?Format=csv&Includes=GradebookTitle,GradebookIdentifier&Identifier=" + url.QueryEscape(gb["GradebookIdentifier"].(string)),
					header: []string{"GradebookTitle", "GradebookIdentifier"}, want: []string{testenv.CSVValue, gb["GradebookIdentifier"].(string)}},
			} {
				t.Run(c.name, func(t *testing.T) {
					res := ts.do(t, "GET", c.path, "").expect(t, c.name, 200)
					if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
						t.Fatalf("Content-Type %q", ct)
					}
					checkCSV(t, string(res.body), c.header, c.want)
				})
			}
		})
	}
}

// checkCSV asserts a CSV document of a header row and one record row, read byte for byte.
func checkCSV(t *testing.T, doc string, header, want []string) {
	t.Helper()
	rows, err := testenv.ReadCSV(doc)
	if err != nil {
		t.Fatalf("%v in %q", err, doc)
	}
	if len(rows) != 2 || strings.Join(rows[0], "|") != strings.Join(header, "|") {
		t.Fatalf("rows %q, want the header %q and one record", rows, header)
	}
	for i, w := range want {
		if rows[1][i] != w {
			t.Errorf("%s: %q, want %q (document %q)", header[i], rows[1][i], w, doc)
		}
	}
	std, err := csv.NewReader(bytes.NewReader([]byte(doc))).ReadAll()
	if err != nil || len(std) != 2 {
		t.Fatalf("encoding/csv: %v, %d rows", err, len(std))
	}
	for i, w := range want {
		if std[1][i] != strings.ReplaceAll(w, "\r\n", "\n") {
			t.Errorf("encoding/csv %s: %q, want %q", header[i], std[1][i], w)
		}
	}
}
