package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"credo/engine/postgres"
	"credo/internal/testenv"
)

// TestEveryExecModeServes: the pools drop pgx's description cache unless the URL's
// default_query_exec_mode reads it (cache_describe, the mode for a pooler without prepared
// statements). Every mode a URL may name serves a statement with an argument, twice (the
// second from the mode's cache), planned and through database/sql; only cache_describe keeps
// the cache, at the URL's capacity when it names one.
func TestEveryExecModeServes(t *testing.T) {
	url := testenv.Postgres(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	cases := []struct {
		params string
		want   int // the description cache's capacity
	}{
		{params: "", want: 0},
		{params: "default_query_exec_mode=cache_statement", want: 0},
		{params: "default_query_exec_mode=exec", want: 0},
		{params: "default_query_exec_mode=simple_protocol", want: 0},
		{params: "default_query_exec_mode=describe_exec", want: 0},
		{params: "default_query_exec_mode=cache_describe", want: 512},
		{params: "default_query_exec_mode=cache_describe&description_cache_capacity=16", want: 16},
	}
	for _, c := range cases {
		name := c.params
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			u := url
			if c.params != "" {
				u += sep + c.params
			}
			capacity, err := postgres.DescriptionCacheCapacity(u)
			if err != nil {
				t.Fatal(err)
			}
			if capacity != c.want {
				t.Errorf("description cache capacity %d, want %d", capacity, c.want)
			}
			p, err := postgres.OpenRequestPool(u, 1, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			ctx := context.Background()
			for i := range 2 {
				var n int64
				if err := p.Count(ctx, "select $1::bigint + 1", []any{int64(i)}, &n); err != nil || n != int64(i)+1 {
					t.Fatalf("planned statement, run %d: %d, %v", i+1, n, err)
				}
				if err := p.SQL().QueryRowContext(ctx, "select $1::bigint + 2", int64(i)).Scan(&n); err != nil || n != int64(i)+2 {
					t.Fatalf("database/sql statement, run %d: %d, %v", i+1, n, err)
				}
			}
		})
	}
}
