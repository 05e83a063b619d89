package gradebook_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/gradebook"
)

// tricky is a title that needs every kind of CSV quoting.
const tricky = "Algebra, \"honours\"\nsection 2"

func seed(t *testing.T, e *env) {
	insertGradebooks(t, e.st,
		gradebookJSON(gid(1), orgA, "Biology"),
		gradebookJSON(gid(2), orgA, tricky),
		gradebookJSON(gid(3), orgA, "Chemistry"),
		gradebookJSON(gid(4), orgB, "Art of another organization"),
	)
}

func TestExportFiles(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		seed(t, e)
		tests := []struct {
			name, query string
			want        string
		}{
			{
				name:  "json default, organization scope, default sort",
				query: "Includes=GradebookIdentifier,GradebookTitle",
				want: `[{"GradebookIdentifier":"` + gid(2) + `","GradebookTitle":"Algebra, \"honours\"\nsection 2"},` +
					`{"GradebookIdentifier":"` + gid(1) + `","GradebookTitle":"Biology"},` +
					`{"GradebookIdentifier":"` + gid(3) + `","GradebookTitle":"Chemistry"}]` + "\n",
			},
			{
				name:  "csv with Includes ordering the columns and RFC 4180 quoting",
				query: "Format=csv&Includes=GradebookTitle,GradebookIdentifier,IsLocked,GradebookCreated",
				want: "GradebookTitle,GradebookIdentifier,IsLocked,GradebookCreated\r\n" +
					`"Algebra, ""honours""` + "\r\n" + `section 2",` + gid(2) + ",false,2024-01-02T03:04:05-06:00\r\n" +
					"Biology," + gid(1) + ",false,2024-01-02T03:04:05-06:00\r\n" +
					"Chemistry," + gid(3) + ",false,2024-01-02T03:04:05-06:00\r\n",
			},
			{
				name:  "filter, sort and a page",
				query: "Filter.Format=CSV&Includes=GradebookTitle&Sort=GradebookTitle desc&Take=2&Page=1&GradebookType=Scores",
				want:  "GradebookTitle\r\nChemistry\r\nBiology\r\n",
			},
			{name: "empty json", query: "GradebookTitle=nothing", want: "[]\n"},
			{name: "empty csv", query: "GradebookTitle=nothing&Format=csv&Excludes=GradebookCreated,LastChangeTime,Reference,LastChangeUser,LastChangeType,GradebookType,IsLocked,PeriodIdentifier,FrameworkIdentifier,EventIdentifier,AchievementIdentifier",
				want: "GradebookIdentifier,OrganizationIdentifier,GradebookTitle\r\n"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				x := e.export(t, callerA, strings.ReplaceAll(tc.query, " ", "%20"))
				if got := e.download(t, callerA, x); got != tc.want {
					t.Errorf("file:\n got %q\nwant %q", got, tc.want)
				}
			})
		}
	})
}

func TestExportFileRoundTrips(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		seed(t, e)
		body := e.download(t, callerA, e.export(t, callerA, "Format=csv"))
		rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 4 || len(rows[0]) != 14 || rows[0][0] != "GradebookIdentifier" {
			t.Fatalf("csv rows %q", rows)
		}
		if rows[1][7] != tricky {
			t.Errorf("title cell %q, want %q", rows[1][7], tricky)
		}
		var recs []map[string]any
		if err := json.Unmarshal([]byte(e.download(t, callerA, e.export(t, callerA, ""))), &recs); err != nil {
			t.Fatal(err)
		}
		if len(recs) != 3 || len(recs[0]) != 14 || recs[0]["GradebookTitle"] != tricky || recs[0]["LastChangeTime"] != "0001-01-01T00:00:00+00:00" {
			t.Errorf("json records %v", recs)
		}
		// An operator exports every organization.
		if err := json.Unmarshal([]byte(e.download(t, operator, e.export(t, operator, ""))), &recs); err != nil || len(recs) != 4 {
			t.Errorf("operator export: %d records, %v", len(recs), err)
		}
	})
}

func TestExportAnswer(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		rec := e.do(t, callerA, http.MethodGet, "/v2/"+e.st.Partition+"/progress/gradebooks/export?Format=csv", nil)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("export: %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		var raw map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		key, _ := raw["ExportKey"].(string)
		if _, err := engine.ParseUUID(key); err != nil || len(raw) != 4 {
			t.Errorf("answer %v", raw)
		}
		want := map[string]any{"DownloadUrl": "/v2/" + e.st.Partition + "/progress/gradebooks/download/" + key,
			"ExportFormat": "csv", "ExportKey": key, "Expiry": "2024-03-10T14:30:00+00:00"}
		for k, v := range want {
			if raw[k] != v {
				t.Errorf("%s = %v, want %v", k, raw[k], v)
			}
		}
		if _, err := os.Stat(filepath.Join(e.cfg.Dir, e.st.Partition, key+".csv")); err != nil {
			t.Errorf("export file: %v", err)
		}
	})
}

func TestExpiryAt(t *testing.T) {
	tests := []struct{ now, want string }{
		{"2024-03-10T14:07:30Z", "2024-03-10T14:30:00+00:00"},
		{"2024-03-10T14:00:00Z", "2024-03-10T14:15:00+00:00"},
		{"2024-03-10T14:00:00.0000001Z", "2024-03-10T14:30:00+00:00"},
		{"2024-03-10T14:44:59Z", "2024-03-10T15:00:00+00:00"},
		{"2024-03-10T14:45:00Z", "2024-03-10T15:00:00+00:00"},
		{"2024-12-31T23:50:00Z", "2025-01-01T00:15:00+00:00"},
		{"2024-03-10T08:37:00-05:30", "2024-03-10T14:30:00+00:00"},
	}
	for _, tc := range tests {
		now, err := engine.ParseDateTime(tc.now)
		if err != nil {
			t.Fatal(err)
		}
		if got := gradebook.ExpiryAt(now.Time).String(); got != tc.want {
			t.Errorf("ExpiryAt(%s) = %s, want %s", tc.now, got, tc.want)
		}
	}
}

func TestExportBadRequests(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		base := "/v2/" + e.st.Partition + "/progress/gradebooks/export"
		tests := []struct {
			name, query string
			header      http.Header
			status      int
			member      string
		}{
			{name: "page without take", query: "?Page=2", status: 400, member: "Page"},
			{name: "take beyond the maximum", query: "?Take=1001", status: 400, member: "Take"},
			{name: "unknown parameter", query: "?Colour=red", status: 400, member: "Colour"},
			{name: "ill-typed filter", query: "?IsLocked=maybe", status: 400, member: "IsLocked"},
			{name: "unknown format", query: "?Format=xml", status: 400, member: "Format"},
			{name: "unknown include", query: "?Includes=Nope", status: 400, member: "Includes"},
			{name: "answer not acceptable", header: http.Header{"Accept": {"text/csv"}}, status: 406},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				rec := e.do(t, callerA, http.MethodGet, base+tc.query, tc.header)
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
				}
				var p struct{ Errors map[string][]string }
				_ = json.Unmarshal(rec.Body.Bytes(), &p)
				if tc.member != "" && len(p.Errors[tc.member]) == 0 {
					t.Errorf("problem does not name %s: %s", tc.member, rec.Body)
				}
			})
		}
		entries, _ := os.ReadDir(filepath.Join(e.cfg.Dir, e.st.Partition))
		if len(entries) != 0 {
			t.Errorf("refused exports left %d files", len(entries))
		}
	})
}

func TestDownloadNotFound(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		seed(t, e)
		x := e.export(t, callerA, "Format=csv")
		var other string
		for p := range e.stores {
			if p != e.st.Partition {
				other = p
			}
		}
		prefix := "/v2/" + e.st.Partition + "/progress/gradebooks/download/"
		opX := e.export(t, operator, "")
		tests := []struct {
			name, target string
			caller       *auth.Principal
		}{
			{name: "unknown key", target: prefix + gid(99), caller: callerA},
			{name: "malformed key", target: prefix + "not-a-key", caller: callerA},
			{name: "another organization's key", target: x.DownloadUrl, caller: callerB},
			{name: "an operator's export to a non-operator of its organization", target: opX.DownloadUrl, caller: callerB},
			{name: "another partition's key", target: "/v2/" + other + "/progress/gradebooks/download/" + x.ExportKey, caller: callerA},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				rec := e.do(t, tc.caller, http.MethodGet, tc.target, nil)
				if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/problem+json" {
					t.Errorf("status %d %q, want a 404 problem: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
				}
			})
		}
		// The owner's organization and operators still can.
		e.download(t, callerA, x)
		e.download(t, operator, x)
		if rec := e.do(t, callerA, http.MethodGet, x.DownloadUrl, http.Header{"Accept": {"application/json"}}); rec.Code != http.StatusNotAcceptable {
			t.Errorf("csv download accepting only JSON: %d, want 406", rec.Code)
		}
	})
}

func TestDownloadExpiry(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		seed(t, e)
		x := e.export(t, callerA, "")
		file := filepath.Join(e.cfg.Dir, e.st.Partition, x.ExportKey+".json")
		e.clock.Set(x.Expiry.Add(-time.Nanosecond))
		e.download(t, callerA, x)
		e.clock.Set(x.Expiry.Time)
		if rec := e.do(t, callerA, http.MethodGet, x.DownloadUrl, nil); rec.Code != http.StatusNotFound {
			t.Fatalf("download at Expiry: %d, want 404", rec.Code)
		}
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			t.Errorf("expired file still there: %v", err)
		}
		e.clock.Set(x.Expiry.Add(-time.Minute))
		if rec := e.do(t, callerA, http.MethodGet, x.DownloadUrl, nil); rec.Code != http.StatusNotFound {
			t.Errorf("download of a removed export: %d, want 404", rec.Code)
		}
	})
}

func TestCleanup(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		start := e.clock.Now()
		old := e.export(t, callerA, "")
		e.clock.Set(start.Add(20 * time.Minute))
		live := e.export(t, callerA, "Format=csv")
		dir := filepath.Join(e.cfg.Dir, e.st.Partition)
		stray := filepath.Join(dir, ".export-123.tmp")
		unrecorded := filepath.Join(dir, gid(77)+".json")
		foreign := filepath.Join(dir, "notes.txt")
		for _, f := range []string{stray, unrecorded, foreign} {
			if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		e.clock.Set(old.Expiry.Add(time.Second))
		n, err := gradebook.Cleanup(ctx, e.st, e.cfg)
		if err != nil || n != 1 {
			t.Fatalf("Cleanup after the first Expiry: %d, %v; want 1", n, err)
		}
		if _, err := os.Stat(filepath.Join(dir, old.ExportKey+".json")); !os.IsNotExist(err) {
			t.Errorf("expired file still there")
		}
		e.download(t, callerA, live)
		// Files older than StrayAge: the temporary and the unrecorded ones go, others stay.
		later := time.Now().Add(gradebook.StrayAge + time.Minute)
		e.clock.Set(later)
		n, err = gradebook.Cleanup(ctx, e.st, e.cfg)
		if err != nil || n != 3 {
			t.Fatalf("Cleanup later: %d, %v; want 3 (live export, stray, unrecorded)", n, err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != "notes.txt" {
			t.Errorf("left %v, want only notes.txt", entries)
		}
	})
}
