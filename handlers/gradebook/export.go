package gradebook

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/deadline"
	"credo/handlers/observe"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// Export is the answer of the export operation (api.md GradebookExport).
type Export struct {
	DownloadUrl  string          `json:"DownloadUrl"`
	ExportFormat engine.Format   `json:"ExportFormat"`
	ExportKey    string          `json:"ExportKey"`
	Expiry       engine.DateTime `json:"Expiry"`
}

// export writes the matching gradebooks to a new file and records it.
func (h *handler) export(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, err := storeOf(r)
	if err != nil {
		return err
	}
	gradebooks, files := h.gradebooks, h.files
	if err := accept(w, r, "application/json"); err != nil {
		return err
	}
	values, err := request.Query(r)
	if err != nil {
		return err
	}
	q, err := ParseQuery(gradebooks, values)
	if err != nil {
		return err
	}
	if len(q.Origin) > 0 {
		slog.Debug("origin", "path", r.URL.Path, "origin", q.Origin) // decisions §5: only logged
	}
	p := auth.FromContext(ctx)
	if p == nil {
		return fmt.Errorf("gradebook: export needs a caller: %w", auth.ErrUnauthenticated)
	}
	if err := h.cfg.Limit.Allow(st.Partition + " " + p.UserIdentifier); err != nil {
		return err
	}
	// The answer waits for the whole file: each chunk written to it gives the response a fresh
	// WriteTimeout, so a large export is answered however long it takes while it progresses.
	keep := func(dst io.Writer) io.Writer { return deadline.Writer(w, r, dst) }
	start := time.Now()
	out, size, err := h.write(ctx, st, gradebooks, files, q, request.Scope(ctx), p, keep)
	if err != nil {
		return err
	}
	observe.Exported(ctx, string(q.Format), size, start)
	return problem.JSON(w, http.StatusOK, out)
}

// ParseQuery reads the export's parameters: the list parameters of the gradebooks, where
// leaving out Take means every match (Take 0) and then Page, if given, must be 1.
func ParseQuery(gradebooks *engine.Resource, values url.Values) (engine.Query, error) {
	q, err := request.ListQuery(gradebooks, values, request.KindList)
	if err != nil {
		return engine.Query{}, err
	}
	if !values.Has("Take") && !values.Has("Filter.Take") {
		if q.Page != 1 {
			return engine.Query{}, engine.InvalidMember("Page", "Page %d needs Take: an export without Take exports every match", q.Page)
		}
		q.Take = 0
	}
	return q, nil
}

// write streams q within scope into the export's content in the partition's database and records the
// export; it becomes visible, to every process sharing the database, only once complete.
// Its Expiry counts from the end of the writing. keep wraps the content's writer; the size
// written is returned with the export.
func (h *handler) write(ctx context.Context, st *engine.Store, gradebooks, files *engine.Resource, q engine.Query,
	scope engine.Scope, p *auth.Principal, keep func(io.Writer) io.Writer) (Export, int64, error) {
	out := Export{ExportFormat: q.Format, ExportKey: engine.NewID()}
	var size int64
	fill := func(w io.Writer) error {
		counted := &countingWriter{w: keep(w)}
		err := WriteFile(ctx, st, gradebooks, q, scope, counted)
		size = counted.n
		return err
	}
	record := func(int64) (engine.Draft, error) {
		out.Expiry = ExpiryAt(h.cfg.now())
		m := fileRecord{
			"ExportKey": out.ExportKey, "PartitionSlug": st.Partition, "ExportFormat": string(q.Format),
			"OwnerUserIdentifier": nil, "OrganizationIdentifier": nil, "Expiry": out.Expiry,
			"ExportCreated": engine.DateTime{Time: h.cfg.now().UTC()},
		}
		if p != nil && p.UserIdentifier != "" {
			m["OwnerUserIdentifier"] = p.UserIdentifier
		}
		if org, ok := scope.OrganizationID(); ok {
			m["OrganizationIdentifier"] = org
		}
		return m.record(files)
	}
	if _, err := st.InsertWithContent(ctx, files, []any{out.ExportKey}, fill, record); err != nil {
		return Export{}, 0, fmt.Errorf("gradebook: export: %w", err)
	}
	out.DownloadUrl = "/v2/" + url.PathEscape(st.Partition) + "/" + Object + "/download/" + out.ExportKey
	return out, size, nil
}

// WriteFile streams every record of q within scope into w, one row at a time, as q.Format says: the JSON
// array or the CSV (header row, RFC 4180 quoting, CRLF) that the list operation answers for
// the same rows, written by the same engine.CSVWriter. Memory stays flat whatever the number
// of rows.
func WriteFile(ctx context.Context, st *engine.Store, gradebooks *engine.Resource, q engine.Query, scope engine.Scope, w io.Writer) error {
	switch q.Format {
	case engine.FormatJSON:
		return writeJSON(ctx, st, gradebooks, q, scope, w)
	case engine.FormatCSV:
		return writeCSV(ctx, st, gradebooks, q, scope, w)
	}
	return fmt.Errorf("gradebook: unknown export format %q", q.Format)
}

func writeJSON(ctx context.Context, st *engine.Store, gradebooks *engine.Resource, q engine.Query, scope engine.Scope, w io.Writer) error {
	b := make([]byte, 0, 1024)
	b = append(b, '[')
	first := true
	err := st.Stream(ctx, gradebooks, q, scope, func(rec engine.Record) error {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = engine.AppendJSON(b, rec, q.Fields)
		_, err := w.Write(b)
		b = b[:0]
		return err
	})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, ']', '\n'))
	return err
}

func writeCSV(ctx context.Context, st *engine.Store, gradebooks *engine.Resource, q engine.Query, scope engine.Scope, w io.Writer) error {
	cw := engine.NewCSVWriter(w, q.Fields)
	if err := cw.WriteHeader(); err != nil {
		return err
	}
	if err := st.Stream(ctx, gradebooks, q, scope, cw.Write); err != nil {
		return err
	}
	return cw.Flush()
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
