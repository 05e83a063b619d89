package gradebook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"credo/engine"
)

// StrayAge is the age after which Cleanup removes a file of the export folder that no export
// record names (an export that failed between rename and record, or a crash mid-write). It is
// well beyond the longest life of an export (Lifetime + Rounding), so that a slow export is
// never taken for a stray.
const StrayAge = time.Hour

// Cleanup removes the partition's expired exports, files and records, and the stray files of
// its export folder. It returns how many files it removed. Processes that share the database
// may run it concurrently.
func Cleanup(ctx context.Context, st *engine.Store, cfg Config) (int, error) {
	_, files, err := resources(st)
	if err != nil {
		return 0, err
	}
	if cfg.Dir == "" {
		return 0, errors.New("gradebook: Config.Dir is empty")
	}
	before, ok := files.Filter("ExpiryBefore")
	if !ok {
		return 0, fmt.Errorf("gradebook: %s has no ExpiryBefore filter", files.Name)
	}
	now := cfg.now()
	q := engine.Query{Fields: files.Output,
		Conds: []engine.Cond{{Field: before.Field, Op: before.Op, Value: engine.DateTime{Time: now.UTC()}}}}
	var expired []exportFile
	err = st.Stream(ctx, files, q, func(rec engine.Record) error {
		e, err := fromRecord(files, rec)
		if err != nil {
			return err
		}
		expired = append(expired, e)
		return nil
	})
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, e := range expired {
		if err := removeExport(ctx, st, files, cfg.Dir, e); err != nil {
			return removed, err
		}
		removed++
	}
	n, err := removeStrays(ctx, st, files, cfg.Dir, now)
	return removed + n, err
}

// removeStrays removes temporary files and unrecorded export files older than StrayAge.
func removeStrays(ctx context.Context, st *engine.Store, files *engine.Resource, dir string, now time.Time) (int, error) {
	dir = filepath.Join(dir, st.Partition)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("gradebook: clean-up: %w", err)
	}
	removed := 0
	for _, ent := range entries {
		if !ent.Type().IsRegular() {
			continue
		}
		info, err := ent.Info()
		if err != nil || now.Sub(info.ModTime()) < StrayAge {
			continue
		}
		name := ent.Name()
		if !(strings.HasPrefix(name, tempPrefix) && strings.HasSuffix(name, tempSuffix)) {
			key, _, _ := strings.Cut(name, ".")
			id, err := engine.ParseUUID(key)
			if err != nil {
				continue // not ours
			}
			if found, err := st.Exists(ctx, files, []any{id}, ""); err != nil || found {
				continue // a live export: its Expiry removes it
			}
		}
		if err := os.Remove(filepath.Join(dir, name)); err == nil {
			removed++
		}
	}
	return removed, nil
}

// RunCleanup runs Cleanup on every partition of db at once and then every interval, until
// ctx ends. Failures are logged and retried at the next interval.
func RunCleanup(ctx context.Context, db *engine.Database, cfg Config, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		for _, p := range db.Partitions() {
			st, ok := db.Store(p)
			if !ok {
				continue
			}
			if n, err := Cleanup(ctx, st, cfg); err != nil && ctx.Err() == nil {
				slog.Error("gradebook export clean-up failed", "partition", p, "err", err)
			} else if n > 0 {
				slog.Info("gradebook exports removed", "partition", p, "files", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
