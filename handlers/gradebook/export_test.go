package gradebook_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/gradebook"
	"credo/internal/testenv"
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
					`"Algebra, ""honours""` + "\n" + `section 2",` + gid(2) + ",false,2024-01-02T03:04:05-06:00\r\n" +
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

// TestExportCSVKeepsValues reads a title that needs every kind of CSV quoting back from a CSV
// export byte for byte (encoding/csv reads a CRLF inside a field as LF, and nothing else
// differently).
func TestExportCSVKeepsValues(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		insertGradebooks(t, e.st, gradebookJSON(gid(7), orgA, testenv.CSVValue))
		body := e.download(t, callerA, e.export(t, callerA, "Format=csv&Includes=GradebookTitle,GradebookIdentifier"))
		want := [][]string{{"GradebookTitle", "GradebookIdentifier"}, {testenv.CSVValue, gid(7)}}
		rows, err := testenv.ReadCSV(body)
		if err != nil || fmt.Sprintf("%q", rows) != fmt.Sprintf("%q", want) {
			t.Fatalf("file %q\nread %q (%v)\nwant %q", body, rows, err, want)
		}
		std, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		want[1][0] = strings.ReplaceAll(testenv.CSVValue, "\r\n", "\n")
		if err != nil || fmt.Sprintf("%q", std) != fmt.Sprintf("%q", want) {
			t.Fatalf("encoding/csv read %q (%v), want %q", std, err, want)
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
		if recorded, chunks := e.stored(t, key); !recorded || chunks != 1 {
			t.Errorf("export stored: recorded %v, %d chunks; want a record and one chunk", recorded, chunks)
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
		if n := e.chunks(t, ""); n != 0 {
			t.Errorf("refused exports left %d chunks", n)
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
		e.clock.Set(x.Expiry.Add(-time.Nanosecond))
		e.download(t, callerA, x)
		e.clock.Set(x.Expiry.Time)
		if rec := e.do(t, callerA, http.MethodGet, x.DownloadUrl, nil); rec.Code != http.StatusNotFound {
			t.Fatalf("download at Expiry: %d, want 404", rec.Code)
		}
		if recorded, chunks := e.stored(t, x.ExportKey); recorded || chunks != 0 {
			t.Errorf("expired export still stored: recorded %v, %d chunks", recorded, chunks)
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
		// Content that no export owns: an export whose process died before recording it.
		table := `"gradebook_export_chunks"`
		if e.st.Dialect() == engine.Postgres {
			table = `"` + e.st.Partition + `".` + table
		}
		if err := e.st.DB(ctx).Exec(`INSERT INTO `+table+` ("export_key", "seq", "data", "written") VALUES (?, 0, ?, ?)`,
			gid(77), []byte("[]\n"), time.Now().Unix()).Error; err != nil {
			t.Fatal(err)
		}
		e.clock.Set(old.Expiry.Add(time.Second))
		n, err := gradebook.Cleanup(ctx, e.st, e.cfg)
		if err != nil || n != 1 {
			t.Fatalf("Cleanup after the first Expiry: %d, %v; want 1", n, err)
		}
		if recorded, chunks := e.stored(t, old.ExportKey); recorded || chunks != 0 {
			t.Errorf("expired export still stored: recorded %v, %d chunks", recorded, chunks)
		}
		if e.chunks(t, gid(77)) != 1 {
			t.Error("Cleanup removed young content that no export owns: its export may still be written")
		}
		e.download(t, callerA, live)
		// Past ContentOrphanAge, the orphan goes with the live export, now expired too.
		e.clock.Set(time.Now().Add(engine.ContentOrphanAge + time.Minute))
		n, err = gradebook.Cleanup(ctx, e.st, e.cfg)
		if err != nil || n != 1 {
			t.Fatalf("Cleanup later: %d, %v; want 1 (the live export)", n, err)
		}
		if left := e.chunks(t, ""); left != 0 {
			t.Errorf("left %d chunks, want none", left)
		}
	})
}

// TestDownloadOnAnotherProcess exports through one process and downloads, whole and by
// ranges, through another that shares the database: nothing of an export is local.
func TestDownloadOnAnotherProcess(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		seed(t, e)
		other := e.replica(t)
		x := e.export(t, callerA, "Format=csv")
		want := e.download(t, callerA, x)
		if got := other.download(t, callerA, x); got != want {
			t.Fatalf("download on the other process:\n%q\nwant\n%q", got, want)
		}
		rec := other.do(t, callerA, http.MethodGet, x.DownloadUrl, http.Header{"Range": {"bytes=5-20"}})
		if rec.Code != http.StatusPartialContent || rec.Body.String() != want[5:21] {
			t.Errorf("range 5-20: %d %q, want 206 %q", rec.Code, rec.Body, want[5:21])
		}
		if got := rec.Header().Get("Content-Range"); got != fmt.Sprintf("bytes 5-20/%d", len(want)) {
			t.Errorf("Content-Range %q", got)
		}
		rec = other.do(t, callerA, http.MethodGet, x.DownloadUrl, nil)
		if got := rec.Header().Get("Content-Length"); got != fmt.Sprint(len(want)) {
			t.Errorf("Content-Length %q, want %d", got, len(want))
		}
	})
}

// TestCleanupOnEveryProcess runs Cleanup on three processes at once over the same expired
// exports: each export is removed once, and none of them fails.
func TestCleanupOnEveryProcess(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		seed(t, e)
		var keys []string
		for range 12 {
			keys = append(keys, e.export(t, callerA, "").ExportKey)
		}
		procs := []*env{e, e.replica(t), e.replica(t)}
		e.clock.Set(e.clock.Now().Add(time.Hour))
		var wg sync.WaitGroup
		removed := make([]int, len(procs))
		errs := make([]error, len(procs))
		for i, p := range procs {
			wg.Go(func() { removed[i], errs[i] = gradebook.Cleanup(context.Background(), p.st, p.cfg) })
		}
		wg.Wait()
		total := 0
		for i := range procs {
			if errs[i] != nil {
				t.Errorf("process %d: %v", i, errs[i])
			}
			total += removed[i]
		}
		if total != len(keys) {
			t.Errorf("removed %v exports in all, want %d", removed, len(keys))
		}
		if n := e.chunks(t, ""); n != 0 {
			t.Errorf("%d chunks left", n)
		}
	})
}

// TestConcurrentExports runs more exports at once than the partition's pool has connections,
// each streaming gradebooks on one connection while writing chunks on another: they all
// finish, with their own content.
func TestConcurrentExports(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		insertMany(t, e.st, 3000) // about 1.8 MB of JSON: several chunks per export
		const n = 40
		var wg sync.WaitGroup
		xs := make([]gradebook.Export, n)
		done := make(chan struct{})
		target := "/v2/" + e.st.Partition + "/progress/gradebooks/export"
		for i := range n {
			wg.Go(func() {
				rec := e.do(t, callerA, http.MethodGet, target, nil)
				if err := json.Unmarshal(rec.Body.Bytes(), &xs[i]); rec.Code != http.StatusOK || err != nil {
					t.Errorf("export %d: %d %s", i, rec.Code, rec.Body)
				}
			})
		}
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			t.Fatal("concurrent exports did not finish within 2 minutes: the pool is exhausted")
		}
		if t.Failed() {
			return
		}
		want := e.download(t, callerA, xs[0])
		for _, x := range xs[1:] {
			if got := e.download(t, callerA, x); got != want {
				t.Fatalf("export %s differs from the first", x.ExportKey)
			}
		}
	})
}
