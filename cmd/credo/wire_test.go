package main

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"credo/engine"
	"credo/handlers"
	"credo/internal/testenv"
	"credo/resources"
)

// without returns the descriptors of fsys but the one at path.
func without(t *testing.T, fsys fs.FS, path string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == path {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		out[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out[path]; ok || len(out) == 0 {
		t.Fatalf("%s: nothing left out", path)
	}
	return out
}

// TestMissingDescriptorFailsStartUp: a module, the security package, the idempotency keeper
// or the version-1 API whose descriptor the registry lacks fails the server's start-up (wire,
// then Handler) with an error naming the descriptor, instead of a panic or a 500 on every
// request.
func TestMissingDescriptorFailsStartUp(t *testing.T) {
	cases := []struct{ file, name, module string }{
		{file: "platform/actions.yaml", name: "PlatformAction", module: "platform"},
		{file: "internal/gradebook-exports.yaml", name: "GradebookExportFile", module: "gradebook"},
		{file: "security/users-connections.yaml", name: "UserConnection", module: "people"},
		{file: "internal/compliance-primary-profiles.yaml", name: "CompliancePrimaryProfile", module: "compliance"},
		{file: "internal/idempotency-keys.yaml", name: "IdempotencyKey", module: "idempotency"},
		{file: "internal/security-signing-keys.yaml", name: "SigningKey", module: "security"},
		{file: "internal/callback-events.yaml", name: "CallbackEvent", module: "legacy"},
		{file: "internal/venues.yaml", name: "Venue", module: "legacy"},
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					reg, err := engine.Load(without(t, resources.FS, tc.file))
					if err != nil {
						t.Fatalf("the registry without %s does not load: %v", tc.file, err)
					}
					p := testenv.Partition(t)
					ctx, cancel := context.WithCancel(context.Background())
					t.Cleanup(cancel)
					db, err := engine.Open(ctx, b.URL, []string{p}, reg)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { db.Close() })
					srv := &handlers.Server{Registry: reg, Database: db}
					err = wire(ctx, &config{V1Partition: p}, srv)
					if err == nil {
						_, err = srv.Handler()
					}
					if err == nil || !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), tc.module) {
						t.Errorf("start-up without %s: %v, want an error of %s naming it", tc.name, err, tc.module)
					}
				})
			}
		})
	}
}
