package engine_test

import (
	"context"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

// TestPostgresNeedsUTF8: a database of another encoding fails start-up with the reason, once, rather than serving filters that miss and text that is mangled.
func TestPostgresNeedsUTF8(t *testing.T) {
	url := testenv.NewDatabase(t, "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.Partition(t)
	db, err := engine.Open(context.Background(), url, []string{p}, reg)
	if err == nil { // Open connects at once; should it not, the first migration does
		defer db.Close()
		s, _ := db.Store(p)
		err = s.Migrate(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), "encoding is SQL_ASCII; credo needs UTF8") {
		t.Fatalf("migrate on a SQL_ASCII database: %v, want the encoding named", err)
	}
	if n := strings.Count(err.Error(), "engine: "); n != 1 {
		t.Errorf("%q says \"engine: \" %d times, want once", err, n)
	}
}
