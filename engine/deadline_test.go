package engine_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"credo/engine"
	"credo/handlers/request"
	"credo/internal/testenv"
)

// slack is what a bounded operation may take beyond its timeout on a loaded two-CPU machine.
const slack = 1500 * time.Millisecond

// TestStatementsEndWhenPostgresFreezes: behind a proxy that stops forwarding, every kind of
// statement — planned reads, a stream, an insert, a transaction, a module's GORM statement —
// fails with ErrUnavailable within the timeout instead of waiting for ever, saying that the
// database did not answer within it (a client read "The database is unavailable", as for one
// that cannot be reached); Ping fails too; Close returns; and after the database answers again,
// so do the statements.
func TestStatementsEndWhenPostgresFreezes(t *testing.T) {
	dbURL, proxy := testenv.ProxyURL(t, testenv.Postgres(t))
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	p := testenv.Partition(t)
	const timeout = time.Second
	db, err := engine.Limits{Timeout: timeout}.Open(context.Background(), dbURL, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := db.Store(p)
	id := mustCreate(t, s, w, widget("F1", "")).Get(w, "WidgetIdentifier").(string)

	proxy.Freeze()
	ctx := context.Background()
	ops := map[string]func() error{
		"get": func() error { _, err := s.Get(ctx, w, []any{id}, nil, engine.AllOrganizations()); return err },
		"list": func() error {
			_, _, err := s.List(ctx, w, engine.Query{Page: 1, Take: 20, Sort: w.DefaultSort, Fields: w.Output}, engine.AllOrganizations())
			return err
		},
		"count": func() error { _, err := s.Count(ctx, w, engine.Query{}, engine.AllOrganizations()); return err },
		"stream": func() error {
			return s.Stream(ctx, w, engine.Query{Page: 1, Fields: w.Output}, engine.AllOrganizations(), func(engine.Record) error { return nil })
		},
		"create": func() error {
			_, err := testenv.CreateJSON(ctx, s, w, []byte(widget("F2", "")), engine.AllOrganizations())
			return err
		},
		"patch": func() error {
			return testenv.PatchJSON(ctx, s, w, []any{id}, []byte(`{"WidgetTitle":"x"}`), engine.AllOrganizations())
		},
		"module": func() error {
			var n int64
			return s.Translate(s.DB(ctx).Table(s.TableName(w)).Count(&n).Error)
		},
		"ping": func() error { return s.Ping(ctx) },
	}
	var wg sync.WaitGroup
	for name, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := op()
			if took := time.Since(start); took > timeout+slack {
				t.Errorf("%s with the database frozen took %v, want about %v", name, took, timeout)
			}
			if !errors.Is(err, engine.ErrUnavailable) {
				t.Errorf("%s with the database frozen: %v, want ErrUnavailable", name, err)
			}
			if reason := engine.Reason(err); name != "ping" && !strings.Contains(reason, "within 1s") {
				t.Errorf("%s with the database frozen: the reason %q does not say that it did not answer within 1s", name, reason)
			}
		}()
	}
	wg.Wait()

	proxy.Thaw()
	if _, err := s.Get(ctx, w, []any{id}, nil, engine.AllOrganizations()); err != nil {
		t.Errorf("get after the database answers again: %v", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("ping after the database answers again: %v", err)
	}

	proxy.Freeze()
	if _, err := s.Get(ctx, w, []any{id}, nil, engine.AllOrganizations()); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("get frozen again: %v", err)
	}
	start := time.Now()
	db.Close()
	if took := time.Since(start); took > timeout+slack {
		t.Errorf("Close with the database frozen took %v", took)
	}
}

// TestStreamDeadlineIsPerRow: an export whose consumer is slower than the timeout in total
// still completes, because the deadline bounds the wait for each row, not the whole stream.
func TestStreamDeadlineIsPerRow(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			reg := fixtureRegistry(t)
			w := reg.MustByName("Widget")
			p := testenv.Partition(t)
			// The partition is migrated under the default timeout first, so that the short one
			// bounds only the stream, not the start-up work of a loaded machine.
			first, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			first.Close()
			const timeout = time.Second
			db, err := engine.Limits{Timeout: timeout}.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, _ := db.Store(p)
			for i := range 6 {
				mustCreate(t, s, w, widget(fmt.Sprintf("S%d", i), ""))
			}
			n := 0
			err = s.Stream(context.Background(), w, engine.Query{Page: 1, Sort: w.DefaultSort, Fields: w.Output}, engine.AllOrganizations(), func(engine.Record) error {
				n++
				time.Sleep(timeout / 4)
				return nil
			})
			if err != nil || n != 6 {
				t.Fatalf("a stream of 6 × %v with a %v timeout: %d rows, %v", timeout/4, timeout, n, err)
			}
		})
	}
}

// TestPingWhenPoolIsBusy: with every connection of the request pool held by a request, Ping
// still answers promptly: a busy pool is not a database that is down.
func TestPingWhenPoolIsBusy(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			reg := fixtureRegistry(t)
			w := reg.MustByName("Widget")
			p := testenv.Partition(t)
			const conns = 2
			db, err := engine.Limits{MaxConns: conns, Timeout: 5 * time.Second}.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, _ := db.Store(p)
			id := mustCreate(t, s, w, widget("P1", "")).Get(w, "WidgetIdentifier").(string)
			release := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })
			held := make(chan struct{}, conns)
			var wg sync.WaitGroup
			for range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := s.Stream(context.Background(), w, engine.Query{Page: 1, Sort: w.DefaultSort, Fields: w.Output}, engine.AllOrganizations(), func(engine.Record) error {
						held <- struct{}{}
						<-release
						return nil
					})
					if err != nil {
						t.Error(err)
					}
				}()
			}
			for range conns {
				select {
				case <-held:
				case <-time.After(10 * time.Second):
					t.Fatal("the streams did not start")
				}
			}
			got := make(chan error, 1)
			go func() {
				_, err := s.Get(context.Background(), w, []any{id}, nil, engine.AllOrganizations())
				got <- err
			}()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := s.Ping(ctx); err != nil {
				t.Errorf("ping with the pool busy: %v", err)
			}
			select {
			case err := <-got:
				t.Errorf("a get finished while every connection was held (%v): the pool was not busy", err)
			default:
			}
			once.Do(func() { close(release) })
			wg.Wait()
			if err := <-got; err != nil {
				t.Errorf("get after the pool freed: %v", err)
			}
		})
	}
}

// silentListener accepts connections and never answers, as a database host that hangs.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// TestStartupRefusedSaysSo: a database that refuses the connection at once fails start-up with
// the refusal, not with a wait it did not do ("did not connect or answer within …").
func TestStartupRefusedSaysSo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: a connection is refused at once
	_, err = engine.Limits{Timeout: 5 * time.Second}.Open(context.Background(), "postgres://credo:s3cret@"+addr+"/credo", []string{"e07"}, fixtureRegistry(t))
	if err == nil {
		t.Fatal("open against a closed port succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "partition e07") || !strings.Contains(msg, "the database is unavailable") || strings.Contains(msg, "within 5s") || strings.Contains(msg, "s3cret") {
		t.Errorf("start-up error against a closed port: %q", msg)
	}
}

// TestStartupIsBounded: opening a database that never answers fails within the timeout with a
// message naming the partition and the database (without its password); cancelling start-up
// (a signal) returns at once.
func TestStartupIsBounded(t *testing.T) {
	reg := fixtureRegistry(t)
	dbURL := "postgres://credo:s3cret@" + silentListener(t) + "/credo"
	const timeout = 500 * time.Millisecond
	start := time.Now()
	_, err := engine.Limits{Timeout: timeout}.Open(context.Background(), dbURL, []string{"e07"}, reg)
	took := time.Since(start)
	if err == nil || took > timeout+slack {
		t.Fatalf("open against a silent database: %v after %v", err, took)
	}
	msg := err.Error()
	for _, want := range []string{"partition e07", strings.TrimPrefix(dbURL, "postgres://credo:s3cret@"), "did not connect or answer within 500ms"} {
		if !strings.Contains(msg, want) {
			t.Errorf("start-up error %q does not say %q", msg, want)
		}
	}
	if strings.Count(msg, "engine: ") != 1 {
		t.Errorf("start-up error %q: want one \"engine: \" (wrapped once)", msg)
	}
	if strings.Contains(msg, "s3cret") {
		t.Errorf("start-up error shows the password: %q", msg)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start = time.Now()
	_, err = engine.Limits{Timeout: time.Minute}.Open(ctx, dbURL, []string{"e07"}, reg)
	if took := time.Since(start); err == nil || took > 200*time.Millisecond+slack || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancelled start-up: %v after %v", err, took)
	}
}

// TestConnectionLimitIsUnavailable: a PostgreSQL that refuses connections beyond a limit below
// the pool's makes statements fail with ErrUnavailable (a 503), never an unknown error (a 500);
// Ping reports the refusals, then recovers once the database accepts connections again.
func TestConnectionLimitIsUnavailable(t *testing.T) {
	dbURL := testenv.LimitedDatabase(t, 3) // the probe's connection and two of the pool's
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	p := testenv.Partition(t)
	db, err := engine.Limits{MaxConns: 12, Timeout: 5 * time.Second}.Open(context.Background(), dbURL, []string{p}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, _ := db.Store(p)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := mustCreate(t, s, w, widget("L1", "")).Get(w, "WidgetIdentifier").(string)
	var refused atomic.Int64
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				var err error
				switch (g + i) % 4 {
				case 0:
					_, err = s.Get(context.Background(), w, []any{id}, nil, engine.AllOrganizations())
				case 1:
					_, _, err = s.List(context.Background(), w, engine.Query{Page: 1, Take: 5, Sort: w.DefaultSort, Fields: w.Output}, engine.AllOrganizations())
				case 2:
					_, err = testenv.CreateJSON(context.Background(), s, w, []byte(widget(fmt.Sprintf("L%d-%d", g, i), "")), engine.AllOrganizations())
				case 3:
					var n int64
					err = engine.Translate(s.DB(context.Background()).Table(s.TableName(w)).Count(&n).Error)
				}
				if err == nil {
					continue
				}
				if !errors.Is(err, engine.ErrUnavailable) {
					t.Errorf("over the connection limit: %v, want ErrUnavailable", err)
				}
				if strings.Contains(err.Error(), "53300") {
					refused.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if refused.Load() == 0 {
		t.Fatal("no statement was refused a connection: the test did not reach the limit")
	}
	if err := s.Ping(context.Background()); !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("ping right after refusals: %v, want ErrUnavailable naming the refusal", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Ping(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("ping still fails 10 s after the refusals: %v", s.Ping(context.Background()))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCancelledClientsDoNotFailOthers: half of 64 clients abandon their requests at random
// moments; the requests that nobody cancelled all succeed. Before statements were detached from
// their request's cancellation, 3–4 of 25,000 failed on PostgreSQL with "failed to deallocate
// cached statement(s): … i/o timeout" or "driver: bad connection", on connections that pgx
// had cut off for another client.
func TestCancelledClientsDoNotFailOthers(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			reg := fixtureRegistry(t)
			r := reg.MustByName("UserComment")
			p := testenv.Partition(t)
			db, err := engine.Open(context.Background(), b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			s, _ := db.Store(p)
			c := testenv.SeedComments(t, s, 2000, 50)
			const total = 20000
			var ops atomic.Int64
			var mu sync.Mutex
			failures := map[string]int{}
			var wg sync.WaitGroup
			for worker := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(worker), 1))
					cancelling := worker%2 == 1
					for ops.Add(1) <= total {
						ctx, cancel := context.WithCancel(context.Background())
						if cancelling {
							time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, cancel)
						}
						err := commentOp(ctx, s, r, c, rng)
						cancel()
						if err != nil && !cancelling {
							mu.Lock()
							failures[err.Error()]++
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			for msg, n := range failures {
				t.Errorf("%d requests that nobody cancelled failed: %s", n, msg)
			}
		})
	}
}

// commentOp runs one random operation of the request mix: get, list, count, create, patch (a
// transaction) and a module's GORM reads.
func commentOp(ctx context.Context, s *engine.Store, r *engine.Resource, c testenv.Comments, rng *rand.Rand) error {
	pair := c.Pairs[rng.IntN(len(c.Pairs))]
	id := c.IDs[rng.IntN(len(c.IDs))]
	switch rng.IntN(7) {
	case 0:
		_, err := s.Get(ctx, r, []any{id}, nil, engine.AllOrganizations())
		return err
	case 1:
		q, err := request.ListQuery(r, url.Values{"UserIdentifier": {pair[1]}, "Take": {"20"}}, request.KindList)
		if err != nil {
			return err
		}
		_, _, err = s.List(ctx, r, q, engine.AllOrganizations())
		return err
	case 2:
		q, err := request.ListQuery(r, url.Values{"OrganizationIdentifier": {pair[0]}}, request.KindCount)
		if err != nil {
			return err
		}
		_, err = s.Count(ctx, r, q, engine.AllOrganizations())
		return err
	case 3:
		_, err := testenv.CreateJSON(ctx, s, r, fmt.Appendf(nil, `{"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentCreatedBy":%q,"CommentText":"x"}`, pair[0], pair[1], pair[1]), engine.AllOrganizations())
		return err
	case 4:
		return testenv.PatchJSON(ctx, s, r, []any{id}, []byte(`{"CommentText":"y"}`), engine.AllOrganizations())
	case 5:
		var rows []map[string]any
		return s.DB(ctx).Table(s.TableName(r)).Where("user_identifier = ?", pair[1]).Limit(20).Find(&rows).Error
	default:
		var n int64
		return s.DB(ctx).Table(s.TableName(r)).Where("organization_identifier = ?", pair[0]).Count(&n).Error
	}
}

// TestTranslateUnavailable: PostgreSQL's refusals (class 53, 57P0x), cancelled statements, lock
// waits past lock_timeout and broken connections are ErrUnavailable; a statement naming a table
// or column the partition lacks is ErrNotMigrated (it was an unknown error, a 500); other errors
// keep their identity. A timeout, a cancel and a lock wait say which they were (Reason), for the
// client; a refusal or a lost connection is the database unavailable, which says it all.
func TestTranslateUnavailable(t *testing.T) {
	for _, tc := range []struct {
		err         error
		unavailable bool
		notMigrated bool
		reason      string
	}{
		{err: &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}, unavailable: true},
		{err: fmt.Errorf("acquire: %w", &pgconn.PgError{Code: "53300"}), unavailable: true},
		{err: &pgconn.PgError{Code: "53200", Message: "out of memory"}, unavailable: true},
		{err: &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, unavailable: true},
		{err: &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, unavailable: true},
		{err: &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}, unavailable: true,
			reason: "the database cancelled the statement at the statement_timeout set on the database or its role"},
		{err: &pgconn.PgError{Code: "57014", Message: "canceling statement due to user request"}, unavailable: true,
			reason: "the database cancelled the statement (an administrator's request)"},
		{err: &pgconn.PgError{Code: "55P03", Message: "canceling statement due to lock timeout"}, unavailable: true,
			reason: "another transaction held a lock the request needed (on a record it writes, or on its table) for more than its lock timeout"},
		{err: &pgconn.PgError{Code: "08006"}, unavailable: true},
		{err: context.DeadlineExceeded, unavailable: true, reason: "the database did not answer within the database timeout"},
		{err: fmt.Errorf("query: %w", driver.ErrBadConn), unavailable: true},
		// A pooled connection that the database (or the network) closed: pgx's errors.
		{err: fmt.Errorf("engine: list: %w", io.ErrUnexpectedEOF), unavailable: true},
		{err: fmt.Errorf("query: %w", pgconn.ErrConnClosed), unavailable: true},
		{err: fmt.Errorf("write failed: %w", &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}), unavailable: true},
		{err: &pgconn.PgError{Code: "42P01", Message: `relation "e01.users" does not exist`}, notMigrated: true,
			reason: "the partition's tables do not match its descriptors (a table or column they need is missing) and must be migrated again, as credo does when it starts"},
		{err: &pgconn.PgError{Code: "42703", Message: "column t.email does not exist"}, notMigrated: true,
			reason: "the partition's tables do not match its descriptors (a table or column they need is missing) and must be migrated again, as credo does when it starts"},
		{err: &pgconn.PgError{Code: "42601", Message: "syntax error at or near \"SELEC\""}},
	} {
		got := engine.Translate(tc.err)
		if errors.Is(got, engine.ErrUnavailable) != tc.unavailable || errors.Is(got, engine.ErrNotMigrated) != tc.notMigrated {
			t.Errorf("Translate(%v) = %v: unavailable %v, not migrated %v", tc.err, got, !tc.unavailable, !tc.notMigrated)
		}
		if reason := engine.Reason(got); reason != tc.reason {
			t.Errorf("Translate(%v): reason %q, want %q", tc.err, reason, tc.reason)
		}
	}
}
