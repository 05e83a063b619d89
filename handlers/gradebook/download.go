package gradebook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/gorilla/mux"

	"credo/auth"
	"credo/engine"
	"credo/handlers/problem"
)

// mediaTypes are the Content-Types of the export formats.
var mediaTypes = map[engine.Format]string{
	engine.FormatJSON: "application/json",
	engine.FormatCSV:  "text/csv",
}

// download streams an export's file while the caller may still see it.
func (h *handler) download(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st := engine.StoreFrom(ctx)
	_, files, err := resources(st)
	if err != nil {
		return err
	}
	key := mux.Vars(r)["key"]
	e, err := h.find(ctx, st, files, key, auth.FromContext(ctx))
	if err != nil {
		return err
	}
	mt, ok := mediaTypes[e.format]
	if !ok {
		return fmt.Errorf("gradebook: export %s has unknown format %q", e.key, e.format)
	}
	if err := accept(r, mt); err != nil {
		return err
	}
	f, err := os.Open(h.path(st, e))
	if errors.Is(err, fs.ErrNotExist) {
		h.remove(ctx, st, files, e)
		return notFound(key)
	}
	if err != nil {
		return fmt.Errorf("gradebook: open export %s: %w", e.key, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("gradebook: open export %s: %w", e.key, err)
	}
	w.Header().Set("Content-Type", mt+"; charset=utf-8")
	w.Header().Set("Content-Disposition", "attachment; filename=gradebook."+string(e.format))
	w.Header().Set("Cache-Control", "private, no-store")
	// ServeContent copies the file without buffering it, and answers ranges and HEAD.
	http.ServeContent(w, r, "", info.ModTime(), f)
	return nil
}

// exportFile is a recorded export.
type exportFile struct {
	key, partition, org, name string
	format                    engine.Format
	expiry                    engine.DateTime
}

func notFound(key string) error {
	return problem.New(http.StatusNotFound, "The gradebook export %q does not exist or has expired.", key)
}

// find returns the export with key if the caller may download it now. Another partition's or
// organization's key, an unknown or malformed one and an expired one are all 404s; an
// expired export is removed on the way.
func (h *handler) find(ctx context.Context, st *engine.Store, files *engine.Resource, key string, p *auth.Principal) (exportFile, error) {
	id, err := engine.ParseUUID(key)
	if err != nil {
		return exportFile{}, notFound(key)
	}
	rec, err := st.Get(ctx, files, []any{id}, nil, "")
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
	if scope := p.Scope(); scope != "" && e.org != scope {
		return exportFile{}, notFound(key)
	}
	if !h.cfg.now().Before(e.expiry.Time) {
		h.remove(ctx, st, files, e)
		return exportFile{}, notFound(key)
	}
	return e, nil
}

// path returns where the export's file lives.
func (h *handler) path(st *engine.Store, e exportFile) string {
	return filepath.Join(h.cfg.Dir, st.Partition, e.name)
}

// remove deletes an export's file and record; another process may have done so first, and a
// failure only delays the removal to the next Cleanup.
func (h *handler) remove(ctx context.Context, st *engine.Store, files *engine.Resource, e exportFile) {
	_ = removeExport(ctx, st, files, h.cfg.Dir, e)
}

func removeExport(ctx context.Context, st *engine.Store, files *engine.Resource, dir string, e exportFile) error {
	if err := os.Remove(filepath.Join(dir, st.Partition, e.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gradebook: remove export %s: %w", e.key, err)
	}
	if err := st.Delete(ctx, files, []any{e.key}, ""); err != nil && !engine.IsNotFound(err) {
		return err
	}
	return nil
}

// fileRecord holds an export record's members by name.
type fileRecord map[string]any

// insert stores the record through the engine, which validates it.
func (m fileRecord) insert(ctx context.Context, st *engine.Store, files *engine.Resource) error {
	rec := files.NewRecord()
	present := make([]bool, len(files.Members))
	for name, v := range m {
		f, ok := files.Member(name)
		if !ok {
			return fmt.Errorf("gradebook: %s has no member %s", files.Name, name)
		}
		rec[f.Index], present[f.Index] = v, true
	}
	if _, err := st.Insert(ctx, files, rec, present, ""); err != nil {
		return fmt.Errorf("gradebook: record export: %w", err)
	}
	return nil
}

// fromRecord reads an export record.
func fromRecord(files *engine.Resource, rec engine.Record) (exportFile, error) {
	str := func(name string) string { s, _ := rec.Get(files, name).(string); return s }
	e := exportFile{key: str("ExportKey"), partition: str("PartitionSlug"), org: str("OrganizationIdentifier"),
		name: str("FileName"), format: engine.Format(str("ExportFormat"))}
	exp, ok := rec.Get(files, "Expiry").(engine.DateTime)
	if !ok {
		return exportFile{}, fmt.Errorf("gradebook: export %s has no Expiry", e.key)
	}
	e.expiry = exp
	// The name comes from the database; never let it leave the partition's folder.
	if e.name == "" || filepath.Base(e.name) != e.name || e.name[0] == '.' {
		return exportFile{}, fmt.Errorf("gradebook: export %s has a bad file name %q", e.key, e.name)
	}
	return e, nil
}
