package gradebook_test

import (
	"net/http"
	"testing"
	"time"
)

// TestDownloadConditionalRequests: the download answers the conditional and range requests
// its description names as any file server does, each with an answer the document declares
// (the env's validator checks statuses and headers); a failed precondition (If-Match, which no
// value but * can meet since a file has no ETag, or If-Unmodified-Since before the export) is
// the 412 problem document, not an empty body under the file's Content-Type.
func TestDownloadConditionalRequests(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		seed(t, e)
		x := e.export(t, callerA, "")
		made, err := http.ParseTime(e.do(t, callerA, http.MethodGet, x.DownloadUrl, nil).Header().Get("Last-Modified"))
		if err != nil {
			t.Fatalf("Last-Modified: %v", err)
		}
		past := made.Add(-time.Hour).Format(http.TimeFormat)
		future := made.Add(time.Hour).Format(http.TimeFormat)
		cases := []struct {
			name    string
			header  http.Header
			status  int
			problem bool
		}{
			{name: "whole", status: http.StatusOK},
			{name: "range", header: http.Header{"Range": {"bytes=0-9"}}, status: http.StatusPartialContent},
			{name: "range outside", header: http.Header{"Range": {"bytes=99999999-"}}, status: http.StatusRequestedRangeNotSatisfiable},
			{name: "not modified", header: http.Header{"If-Modified-Since": {future}}, status: http.StatusNotModified},
			{name: "If-Match *", header: http.Header{"If-Match": {"*"}}, status: http.StatusOK},
			{name: "If-Match an ETag", header: http.Header{"If-Match": {`"x"`}}, status: http.StatusPreconditionFailed, problem: true},
			{name: "If-Match an ETag with a range", header: http.Header{"If-Match": {`"x"`}, "Range": {"bytes=0-9"}},
				status: http.StatusPreconditionFailed, problem: true},
			{name: "unmodified since tomorrow", header: http.Header{"If-Unmodified-Since": {future}}, status: http.StatusOK},
			{name: "unmodified since yesterday", header: http.Header{"If-Unmodified-Since": {past}},
				status: http.StatusPreconditionFailed, problem: true},
			{name: "If-Unmodified-Since not a date", header: http.Header{"If-Unmodified-Since": {"soon"}}, status: http.StatusOK},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := e.do(t, callerA, http.MethodGet, x.DownloadUrl, tc.header)
				if rec.Code != tc.status {
					t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tc.status)
				}
				if ct := rec.Header().Get("Content-Type"); tc.problem && ct != "application/problem+json" {
					t.Errorf("Content-Type %q, want a problem document", ct)
				}
			})
		}
	})
}
