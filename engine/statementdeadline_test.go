package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"credo/engine"
	"credo/internal/reqctx"
	"credo/internal/testenv"
)

// TestStatementDeadlineLeavesTheConnection: a planned statement's deadline is set on its
// connection's socket (see Store.statement); it must leave with the statement. On one pooled
// connection, a get, a wait longer than the timeout, then a module's GORM statement, a
// transaction and a get all succeed.
func TestStatementDeadlineLeavesTheConnection(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			reg := fixtureRegistry(t)
			w := reg.MustByName("Widget")
			p := testenv.Partition(t)
			const timeout = 500 * time.Millisecond
			db, err := engine.Limits{MaxConns: 1, Timeout: timeout}.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, _ := db.Store(p)
			id := mustCreate(t, s, w, widget("D1", "")).Get(w, "WidgetIdentifier").(string)
			ctx := context.Background()
			if _, err := s.Get(ctx, w, []any{id}, nil, engine.AllOrganizations()); err != nil {
				t.Fatal(err)
			}
			time.Sleep(timeout + 300*time.Millisecond)
			var n int64
			if err := s.DB(ctx).Table(s.TableName(w)).Count(&n).Error; err != nil || n != 1 {
				t.Errorf("module statement after a get and a wait: %d, %v", n, err)
			}
			time.Sleep(timeout + 300*time.Millisecond)
			if err := testenv.PatchJSON(ctx, s, w, []any{id}, []byte(`{"WidgetTitle":"x"}`), engine.AllOrganizations()); err != nil {
				t.Errorf("patch after a get and a wait: %v", err)
			}
			time.Sleep(timeout + 300*time.Millisecond)
			if _, err := s.Get(ctx, w, []any{id}, nil, engine.AllOrganizations()); err != nil {
				t.Errorf("get after a wait: %v", err)
			}
		})
	}
}

// TestGetAllocations pins what a get costs in allocations on each store, for a request's
// context (reqctx) as the handlers pass it. On PostgreSQL the statement's deadline is included:
// a context.WithTimeout per statement and the context watcher pgx registered on it were 12 more
// (see Store.statement), the operation's name boxed for wrap on every call 2 more (see wrap),
// the statement's context, now a part of the request's, 1 more. On
// SQLite most are the driver's: database/sql's statement and rows, and modernc's columns'
// names and types, read anew for every query.
func TestGetAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			reg := fixtureRegistry(t)
			w := reg.MustByName("Widget")
			p := testenv.Partition(t)
			db, err := engine.Limits{Timeout: 5 * time.Second}.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, _ := db.Store(p)
			id := mustCreate(t, s, w, widget("A1", "")).Get(w, "WidgetIdentifier").(string)
			parent, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Each get on a request context of its own, made beforehand: AllocsPerRun calls
			// get once more than it measures, and get is called once before.
			const runs = 200
			ctxs := make([]*reqctx.Context, runs+2)
			for i := range ctxs {
				ctxs[i] = reqctx.New(parent)
			}
			key := []any{id}
			get := func() {
				ctx := ctxs[0]
				ctxs = ctxs[1:]
				if _, err := s.Get(ctx, w, key, nil, engine.AllOrganizations()); err != nil {
					t.Fatal(err)
				}
			}
			get()
			n := testing.AllocsPerRun(runs, get)
			t.Logf("%v allocations per get", n)
			if max := maxGetAllocs[b.Name]; n > max {
				t.Errorf("a get allocates %v times, want at most %v", n, max)
			}
		})
	}
}

var maxGetAllocs = map[string]float64{"postgres": 15, "sqlite": 47}

// TestLimitsRefuseATimeoutUnderAMillisecond: the databases take timeouts in whole
// milliseconds, where 0 is no limit, so a positive timeout under 1ms would open a store whose
// statements and lock waits are unbounded. Open refuses it and opens nothing.
func TestLimitsRefuseATimeoutUnderAMillisecond(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			reg := fixtureRegistry(t)
			for _, l := range []engine.Limits{{Timeout: 500 * time.Microsecond}, {MigrationTimeout: time.Nanosecond}} {
				db, err := l.Open(context.Background(), b.URL, []string{testenv.Partition(t)}, reg)
				if err == nil {
					db.Close()
					t.Fatalf("%+v: opened; want a refusal", l)
				}
				if !strings.Contains(err.Error(), "at least 1ms") {
					t.Errorf("%+v: %v; want it to say at least 1ms", l, err)
				}
			}
		})
	}
}
