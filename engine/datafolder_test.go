package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"credo/engine"
)

// TestSQLiteDataFolder: sqlite:DIR creates DIR when its parent exists (./data on a first `make
// run`), but a DIR whose parent is missing is a mistyped or unmounted path, not a place to
// start an empty database: Open fails naming the parent and creates nothing. A DIR that is a
// file is refused too. (PostgreSQL has no folder: the store does not matter here.)
func TestSQLiteDataFolder(t *testing.T) {
	reg := fixtureRegistry(t)
	root := t.TempDir()
	open := func(dir string) error {
		db, err := engine.Open(context.Background(), "sqlite:"+dir, []string{"e01"}, reg)
		if err == nil {
			db.Close()
		}
		return err
	}
	fresh := filepath.Join(root, "data")
	if err := open(fresh); err != nil {
		t.Fatalf("a new folder in an existing one: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fresh, "e01.db")); err != nil {
		t.Errorf("the partition's file: %v", err)
	}
	missing := filepath.Join(root, "mnt", "credo")
	err := open(missing)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "mnt")) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a folder whose parent is missing: %v, want an error naming the parent", err)
	}
	if _, err := os.Stat(filepath.Join(root, "mnt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing parent was created (%v)", err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := open(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as the folder: %v, want not a directory", err)
	}
}
