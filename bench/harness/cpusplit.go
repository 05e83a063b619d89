package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"credo/bench/load"
)

// others measures, around a round, the CPU time of the processes that share the machine with
// the server under test: the load driver (this process) and, on a PostgreSQL server on this
// machine, the backends serving the bench database. Only one server is loaded at a time, so a
// round's database time is that server's. Whatever cannot be read (a remote database, no
// permission on /proc) is left out, never guessed.
type others struct {
	dbURL string // PostgreSQL URL, or "" on SQLite (the database runs inside the server)
}

// cpuUse is the CPU time of a round (or per request): the server's, the load driver's and the
// database backends' (zero on SQLite, or when they could not be read).
type cpuUse struct {
	server, driver, database time.Duration
}

func (u cpuUse) add(v cpuUse) cpuUse {
	return cpuUse{u.server + v.server, u.driver + v.driver, u.database + v.database}
}

// per divides by the requests served.
func (u cpuUse) per(requests int64) cpuUse {
	n := time.Duration(requests)
	return cpuUse{u.server / n, u.driver / n, u.database / n}
}

// cpuMark is the CPU time used so far by the load driver and by each database backend.
type cpuMark struct {
	driver   time.Duration
	backends map[int]time.Duration
}

// begin marks the start of a round: the backends' CPU first, so that the connection that lists
// them is not the driver's work in the round.
func (o others) begin(ctx context.Context) cpuMark {
	m := o.backendsCPU(ctx)
	m.driver, _ = load.ReadCPU(os.Getpid())
	return m
}

// end marks the end of a round: the driver's CPU first, for the same reason.
func (o others) end(ctx context.Context) cpuMark {
	driver, _ := load.ReadCPU(os.Getpid())
	m := o.backendsCPU(ctx)
	m.driver = driver
	return m
}

// backendsCPU reads the CPU time of each of the bench database's backends.
func (o others) backendsCPU(ctx context.Context) cpuMark {
	m := cpuMark{backends: map[int]time.Duration{}}
	if o.dbURL == "" {
		return m
	}
	pids, err := backendPIDs(ctx, o.dbURL)
	if err != nil {
		return m
	}
	for _, pid := range pids {
		if cpu, err := load.ReadCPU(pid); err == nil {
			m.backends[pid] = cpu
		}
	}
	return m
}

// since is the CPU time the driver and the database backends used from m0 to m1. A backend
// that started during the round counts from zero; one that ended during it is lost.
func since(m0, m1 cpuMark) (driver, database time.Duration) {
	for pid, cpu := range m1.backends {
		database += cpu - m0.backends[pid]
	}
	return m1.driver - m0.driver, database
}

// backendPIDs lists the client backends connected to the URL's database, this connection
// excepted, when PostgreSQL runs on this machine.
func backendPIDs(ctx context.Context, dbURL string) ([]int, error) {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	if h := cfg.Host; h != "localhost" && !strings.HasPrefix(h, "127.") && h != "::1" && !strings.HasPrefix(h, "/") {
		return nil, errors.New("bench: the database is not on this machine")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int])
}
