package postgres_test

import (
	"context"
	"testing"
	"time"

	"credo/engine/backend"
	"credo/engine/postgres"
	"credo/internal/testenv"
)

// TestNoPooledConnectionHasADeadline: whatever socket deadline a connection carries when it
// goes back to the pool (see TraceRelease), the next statement on it runs without it. On a
// pool of one connection, a deadline is left on its socket, already past or passing during the
// next statement; that statement, planned or through database/sql (GORM's way), succeeds on
// the same connection (the same backend process: a connection replaced after failing would
// hide the deadline rather than show it gone).
func TestNoPooledConnectionHasADeadline(t *testing.T) {
	url := testenv.Postgres(t)
	p, err := postgres.OpenRequestPool(url, 1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	// The statement outlasts a deadline set 50ms before it starts.
	const pidAfterSleep = "select pg_backend_pid() from pg_sleep(0.2)"
	statements := []struct {
		name string
		pid  func(context.Context, backend.Pool) (int64, error)
	}{
		{name: "planned", pid: func(ctx context.Context, p backend.Pool) (int64, error) {
			var pid int64
			return pid, p.Count(ctx, pidAfterSleep, nil, &pid)
		}},
		{name: "database/sql", pid: func(ctx context.Context, p backend.Pool) (int64, error) {
			var pid int64
			return pid, p.SQL().QueryRowContext(ctx, pidAfterSleep).Scan(&pid)
		}},
	}
	deadlines := []struct {
		name  string
		after time.Duration
	}{
		{name: "past", after: -time.Second},
		{name: "during the next statement", after: 50 * time.Millisecond},
	}
	for _, st := range statements {
		for _, dl := range deadlines {
			t.Run(st.name+"/"+dl.name, func(t *testing.T) {
				ctx := context.Background()
				pid, err := postgres.LeaveDeadline(ctx, p, time.Now().Add(dl.after))
				if err != nil {
					t.Fatal(err)
				}
				got, err := st.pid(ctx, p)
				if err != nil {
					t.Fatalf("statement after a deadline was left on its connection: %v", err)
				}
				if got != int64(pid) {
					t.Errorf("statement ran on backend %d, want the connection left with a deadline (%d)", got, pid)
				}
			})
		}
	}
}
