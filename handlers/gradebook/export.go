package gradebook

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"credo/auth"
	"credo/engine"
	"credo/handlers/problem"
)

// Export is the answer of the export operation (api.md GradebookExport).
type Export struct {
	DownloadUrl  string          `json:"DownloadUrl"`
	ExportFormat engine.Format   `json:"ExportFormat"`
	ExportKey    string          `json:"ExportKey"`
	Expiry       engine.DateTime `json:"Expiry"`
}

// fileBuffer is the write buffer of an export file: large enough to keep system calls few,
// small enough not to matter per concurrent export.
const fileBuffer = 64 << 10

// export writes the matching gradebooks to a new file and records it.
func (h *handler) export(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st := engine.StoreFrom(ctx)
	gradebooks, files, err := resources(st)
	if err != nil {
		return err
	}
	if err := accept(r, "application/json"); err != nil {
		return err
	}
	q, err := ParseQuery(gradebooks, r.URL.Query())
	if err != nil {
		return err
	}
	if len(q.Origin) > 0 {
		slog.Debug("origin", "path", r.URL.Path, "origin", q.Origin) // decisions §5: only logged
	}
	p := auth.FromContext(ctx)
	q.Org = p.Scope()
	out, err := h.write(ctx, st, gradebooks, files, q, p)
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, out)
}

// ParseQuery reads the export's parameters: the list parameters of the gradebooks, where
// leaving out Take means every match (Take 0) and then Page, if given, must be 1.
func ParseQuery(gradebooks *engine.Resource, values url.Values) (engine.Query, error) {
	q, err := gradebooks.ParseQuery(values, engine.KindList)
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

// write streams q into a temporary file of the partition's folder, renames it into place and
// records it; the export is only visible once all three have succeeded.
func (h *handler) write(ctx context.Context, st *engine.Store, gradebooks, files *engine.Resource, q engine.Query, p *auth.Principal) (Export, error) {
	dir := filepath.Join(h.cfg.Dir, st.Partition)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return Export{}, fmt.Errorf("gradebook: export folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix+"*"+tempSuffix)
	if err != nil {
		return Export{}, fmt.Errorf("gradebook: export file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	buf := bufio.NewWriterSize(tmp, fileBuffer)
	if err := WriteFile(ctx, st, gradebooks, q, buf); err != nil {
		return Export{}, err
	}
	if err := buf.Flush(); err != nil {
		return Export{}, fmt.Errorf("gradebook: write export: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Export{}, fmt.Errorf("gradebook: write export: %w", err)
	}
	out := Export{ExportFormat: q.Format, ExportKey: engine.NewID(), Expiry: ExpiryAt(h.cfg.now())}
	name := out.ExportKey + "." + string(q.Format)
	final := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return Export{}, fmt.Errorf("gradebook: write export: %w", err)
	}
	done = true
	rec := fileRecord{
		"ExportKey": out.ExportKey, "PartitionSlug": st.Partition, "ExportFormat": string(q.Format),
		"OwnerUserIdentifier": nil, "OrganizationIdentifier": nil, "FileName": name, "Expiry": out.Expiry,
	}
	if p != nil && p.UserIdentifier != "" {
		rec["OwnerUserIdentifier"] = p.UserIdentifier
	}
	if q.Org != "" {
		rec["OrganizationIdentifier"] = q.Org
	}
	if err := rec.insert(ctx, st, files); err != nil {
		_ = os.Remove(final)
		return Export{}, err
	}
	out.DownloadUrl = "/v2/" + url.PathEscape(st.Partition) + "/" + Object + "/download/" + out.ExportKey
	return out, nil
}

// The names of files being written; Cleanup removes old ones that a crash left behind.
const (
	tempPrefix = ".export-"
	tempSuffix = ".tmp"
)

// WriteFile streams every record of q into w, one row at a time, as q.Format says: the JSON
// array or the CSV (header row, RFC 4180 quoting, CRLF) that the list operation answers for
// the same rows. Memory stays flat whatever the number of rows.
func WriteFile(ctx context.Context, st *engine.Store, gradebooks *engine.Resource, q engine.Query, w io.Writer) error {
	switch q.Format {
	case engine.FormatJSON:
		return writeJSON(ctx, st, gradebooks, q, w)
	case engine.FormatCSV:
		return writeCSV(ctx, st, gradebooks, q, w)
	}
	return fmt.Errorf("gradebook: unknown export format %q", q.Format)
}

func writeJSON(ctx context.Context, st *engine.Store, gradebooks *engine.Resource, q engine.Query, w io.Writer) error {
	b := make([]byte, 0, 1024)
	b = append(b, '[')
	first := true
	err := st.Stream(ctx, gradebooks, q, func(rec engine.Record) error {
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

func writeCSV(ctx context.Context, st *engine.Store, gradebooks *engine.Resource, q engine.Query, w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(engine.Names(q.Fields)); err != nil {
		return err
	}
	var cells []string
	err := st.Stream(ctx, gradebooks, q, func(rec engine.Record) error {
		cells = engine.TextValues(rec, q.Fields, cells)
		return cw.Write(cells)
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
