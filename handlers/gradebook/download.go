package gradebook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"credo/engine"
	"credo/handlers/deadline"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// mediaTypes are the Content-Types of the export formats.
var mediaTypes = map[engine.Format]string{
	engine.FormatJSON: "application/json",
	engine.FormatCSV:  "text/csv",
}

// download streams an export's file from the database while the caller may still see it, a
// chunk at a time, whichever process made it.
func (h *handler) download(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, err := storeOf(r)
	if err != nil {
		return err
	}
	files := h.files
	key, err := request.PathValue(r, "ExportKey")
	if err != nil {
		return err
	}
	e, err := h.find(ctx, st, files, key)
	if err != nil {
		return err
	}
	mt, ok := mediaTypes[e.format]
	if !ok {
		return fmt.Errorf("gradebook: export %s has unknown format %q", e.key, e.format)
	}
	if err := accept(w, r, mt); err != nil {
		return err
	}
	if err := precondition(r, e.created.Time); err != nil {
		return err
	}
	content, err := st.OpenContent(ctx, files, []any{e.key})
	if engine.IsNotFound(err) {
		h.remove(ctx, st, files, e)
		return notFound(key)
	}
	if err != nil {
		return fmt.Errorf("gradebook: open export %s: %w", e.key, err)
	}
	w.Header().Set("Content-Type", mt+"; charset=utf-8")
	w.Header().Set("Content-Disposition", "attachment; filename=gradebook."+string(e.format))
	w.Header().Set("Cache-Control", "private, no-store")
	// ServeContent copies the content a buffer at a time (the reader loads one chunk per
	// statement), and answers ranges and HEAD; each chunk it sends moves the write deadline,
	// so a large file reaches a slow client that keeps reading, and a client that stops is
	// cut off after one WriteTimeout.
	http.ServeContent(progressWriter{w, deadline.Writer(w, r, w)}, r, "", e.created.Time, content)
	return nil
}

// precondition refuses a download whose If-Match or If-Unmodified-Since fails (RFC 9110
// §13.2.2), as ServeContent would, but with the 412 problem document: ServeContent's own 412
// has no body under the file's Content-Type. The file has no ETag, so only If-Match: * is met;
// If-Unmodified-Since is read only without If-Match, and an unreadable date is ignored.
func precondition(r *http.Request, modified time.Time) error {
	if im := r.Header.Values("If-Match"); len(im) > 0 {
		if strings.TrimSpace(strings.Join(im, ",")) != "*" {
			return problem.New(http.StatusPreconditionFailed,
				"An export file has no ETag, so If-Match can only be *; download it without If-Match.")
		}
		return nil
	}
	since, err := http.ParseTime(r.Header.Get("If-Unmodified-Since"))
	if err == nil && modified.Truncate(time.Second).After(since) {
		return problem.New(http.StatusPreconditionFailed,
			"The export file was made after If-Unmodified-Since (%s).", modified.UTC().Format(http.TimeFormat))
	}
	return nil
}

// exportFile is a recorded export.
type exportFile struct {
	key, partition, org string
	format              engine.Format
	expiry, created     engine.DateTime
}

func notFound(key string) error {
	return problem.New(http.StatusNotFound, "The gradebook export %s does not exist or has expired.", engine.Quoted(key))
}

// find returns the export with key if the caller may download it now. Another partition's or
// organization's key, an unknown or malformed one and an expired one are all 404s; an
// expired export is removed on the way.
func (h *handler) find(ctx context.Context, st *engine.Store, files *engine.Resource, key string) (exportFile, error) {
	id, err := engine.ParseUUID(key)
	if err != nil {
		return exportFile{}, notFound(key)
	}
	rec, err := st.Get(ctx, files, []any{id}, nil, engine.AllOrganizations())
	if engine.IsNotFound(err) {
		return exportFile{}, notFound(key)
	}
	if err != nil {
		return exportFile{}, err
	}
	e, err := fromRecord(files, rec)
	if err != nil {
		return exportFile{}, err
	}
	if e.partition != st.Partition {
		return exportFile{}, notFound(key)
	}
	// An export limited to no organization (an operator's) has org "" and matches no scope.
	if !request.Scope(ctx).Includes(e.org) {
		return exportFile{}, notFound(key)
	}
	if !h.cfg.now().Before(e.expiry.Time) {
		h.remove(ctx, st, files, e)
		return exportFile{}, notFound(key)
	}
	return e, nil
}

// remove deletes an export, record and content; another process may have done so first, and
// a failure only delays the removal to the next Cleanup.
func (h *handler) remove(ctx context.Context, st *engine.Store, files *engine.Resource, e exportFile) {
	_ = st.Delete(ctx, files, []any{e.key}, engine.AllOrganizations())
}

// fileRecord holds an export record's members by name.
type fileRecord map[string]any

// record builds the export record for the engine, which completes and validates it.
func (m fileRecord) record(files *engine.Resource) (engine.Draft, error) {
	d, err := files.DraftOf(m)
	if err != nil {
		return engine.Draft{}, fmt.Errorf("gradebook: %w", err)
	}
	return d, nil
}

// fromRecord reads an export record.
func fromRecord(files *engine.Resource, rec engine.Record) (exportFile, error) {
	str := func(name string) string { s, _ := rec.Get(files, name).(string); return s }
	e := exportFile{key: str("ExportKey"), partition: str("PartitionSlug"), org: str("OrganizationIdentifier"),
		format: engine.Format(str("ExportFormat"))}
	exp, ok := rec.Get(files, "Expiry").(engine.DateTime)
	if !ok {
		return exportFile{}, fmt.Errorf("gradebook: export %s has no Expiry", e.key)
	}
	e.expiry = exp
	e.created, _ = rec.Get(files, "ExportCreated").(engine.DateTime)
	return e, nil
}

// progressWriter is a ResponseWriter whose body goes through a deadline.Writer.
type progressWriter struct {
	http.ResponseWriter
	body io.Writer
}

func (p progressWriter) Write(b []byte) (int, error) { return p.body.Write(b) }
