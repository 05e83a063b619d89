package engine_test

import (
	"context"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestReadyAndStats: a migrated partition is ready and its pool reports its limit; a partition
// that lost a table is not ready, and the error says it is not migrated.
func TestReadyAndStats(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			db, err := engine.Open(ctx, b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := db.Store(p)
			t.Cleanup(func() {
				if db.Dialect == engine.Postgres {
					s.DB(ctx).Exec(`DROP SCHEMA IF EXISTS "` + p + `" CASCADE`)
				}
				db.Close()
			})
			if err := s.Ready(ctx); err != nil {
				t.Fatalf("Ready after Open: %v", err)
			}
			stats := db.Stats()
			if len(stats) != 1 || stats[0].Max <= 0 || stats[0].InUse != 0 {
				t.Fatalf("Stats = %+v, want one idle pool with a limit", stats)
			}
			want := p
			if db.Dialect == engine.Postgres {
				want = "postgres"
			}
			if stats[0].Pool != want {
				t.Errorf("pool name %q, want %q", stats[0].Pool, want)
			}
			users, _ := reg.ByName("User")
			if err := s.DB(ctx).Exec("DROP TABLE " + s.Table(users)).Error; err != nil {
				t.Fatal(err)
			}
			err = s.Ready(ctx)
			if err == nil || !strings.Contains(err.Error(), "not migrated") {
				t.Fatalf("Ready without the users table = %v, want not migrated", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.Ready(ctx); err != nil {
				t.Fatalf("Ready after Migrate: %v", err)
			}
		})
	}
}

// BenchmarkReady is the cost of one partition's readiness check (/readyz, every second or so
// per prober): the probe's ping and the catalog read of the columns the descriptors need.
func BenchmarkReady(b *testing.B) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, be := range testenv.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			p := testenv.Partition(b)
			db, err := engine.Open(ctx, be.URL, []string{p}, reg)
			if err != nil {
				b.Fatal(err)
			}
			s, _ := db.Store(p)
			b.Cleanup(func() {
				if db.Dialect == engine.Postgres {
					s.DB(ctx).Exec(`DROP SCHEMA IF EXISTS "` + p + `" CASCADE`)
				}
				db.Close()
			})
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Ready(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
