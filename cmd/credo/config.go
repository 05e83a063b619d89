package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"credo/engine"
	"credo/handlers/limit"
	"credo/handlers/security"
	"credo/resources"
)

// config is what the commands need to reach the data: flags with CREDO_* twins (decisions §1).
// Each command declares only the groups of flags it uses (see the *Flags methods); the values
// of the others come from the environment or their defaults.
type config struct {
	Addr     string
	Database string
	// Placed puts partitions on other databases than Database (--partition-database,
	// CREDO_PARTITION_DATABASES): partition → sqlite:DIR or postgres://….
	Placed      placements
	Partitions  []string
	V1Partition string
	// Descriptors names extra descriptor folders (CREDO_DESCRIPTORS, colon-separated), loaded
	// beside the embedded ones: a maintainer's way to try a new group without rebuilding.
	Descriptors []string
	// DB bounds what credo takes from the database and waits for it (--database-timeout,
	// --migration-timeout, --database-max-conns).
	DB engine.Limits
	// Limits are serve's abuse limits (--rate-limits, --trusted-proxies); nil elsewhere.
	Limits *limit.Set
	// Keys are serve's signing and cookie keys (CREDO_SIGNING_KEY, CREDO_COOKIE_KEY; see
	// securityConfig); zero elsewhere.
	Keys security.Config

	partitions, descriptors string
	// configured are the partitions of --partitions (CREDO_PARTITIONS), before a command's
	// --partition narrows Partitions to one.
	configured []string
	// problems are environment values that do not parse, reported as usage errors.
	problems []string
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// newConfig returns the configuration as the environment and the defaults give it.
func newConfig() *config {
	c := &config{
		Addr:        env("CREDO_ADDR", "127.0.0.1:8080"),
		Database:    env("CREDO_DATABASE", "sqlite:./data"),
		V1Partition: env("CREDO_V1_PARTITION", ""),
		partitions:  env("CREDO_PARTITIONS", "e01"),
		descriptors: env("CREDO_DESCRIPTORS", ""),
		DB:          engine.Limits{Timeout: engine.DefaultTimeout, MigrationTimeout: engine.DefaultMigrationTimeout},
	}
	placed, err := parsePlacements(env("CREDO_PARTITION_DATABASES", ""))
	if err != nil {
		c.problems = append(c.problems, err.Error())
	}
	c.Placed = placed
	if v := env("CREDO_DATABASE_TIMEOUT", ""); v != "" {
		if err := setDuration(&c.DB.Timeout, v, minTimeout); err != nil {
			c.problems = append(c.problems, fmt.Sprintf("CREDO_DATABASE_TIMEOUT=%q %v", v, err))
		}
	}
	if v := env("CREDO_MIGRATION_TIMEOUT", ""); v != "" {
		if err := setDuration(&c.DB.MigrationTimeout, v, minTimeout); err != nil {
			c.problems = append(c.problems, fmt.Sprintf("CREDO_MIGRATION_TIMEOUT=%q %v", v, err))
		}
	}
	if v := env("CREDO_DATABASE_MAX_CONNS", ""); v != "" {
		if err := setPositiveInt(&c.DB.MaxConns, v); err != nil {
			c.problems = append(c.problems, fmt.Sprintf("CREDO_DATABASE_MAX_CONNS=%q %v", v, err))
		}
	}
	return c
}

// minTimeout is the smallest timeout a flag accepts. A timeout bounds what a client or the
// database may hold (a connection, a request, a lock), so none can be turned off: 0 is refused,
// not taken for "no limit" as net/http takes it. Below a second a timeout is no protection but
// an outage (an ordinary client on a slow link cannot send a header or read an answer), and the
// database's timeouts are passed to it in whole milliseconds, so that a smaller one would reach
// PostgreSQL and SQLite as 0: no limit.
const minTimeout = time.Second

// setDuration parses v, a duration with its unit, into d if it is at least least. Every
// duration flag and CREDO_* variable goes through it, so that they share their rule and
// wording; the caller names the flag or variable.
func setDuration(d *time.Duration, v string, least time.Duration) error {
	n, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return errors.New("is not a duration such as 10s or 2m")
	case n < 0 && least == 0:
		return errors.New("must not be negative")
	case n == 0 && least > 0:
		return fmt.Errorf("must be at least %s: 0 would mean no limit, and this one cannot be turned off", least)
	case n < least:
		return fmt.Errorf("must be at least %s", least)
	}
	*d = n
	return nil
}

// setPositiveInt parses a whole number that must be positive into n (see setDuration).
func setPositiveInt(n *int, v string) error {
	i, err := strconv.Atoi(v)
	if err != nil || i < 1 {
		return errors.New("is not a positive number")
	}
	*n = i
	return nil
}

// databaseFlags declares where the data is and how long to wait for it.
func (c *config) databaseFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Database, "database", c.Database, "sqlite:DIR or postgres://… (CREDO_DATABASE)")
	fs.Var(&placementFlag{p: &c.Placed}, "partition-database",
		"`PARTITION=DATABASE` places a partition on another database than --database, with its own pool; repeatable (CREDO_PARTITION_DATABASES, comma-separated)")
	fs.Func("database-timeout", fmt.Sprintf("longest wait for the database: each statement, connection and start-up step (default %s, at least %s) (CREDO_DATABASE_TIMEOUT)", c.DB.Timeout, minTimeout),
		func(v string) error { return setDuration(&c.DB.Timeout, v, minTimeout) })
	fs.Func("migration-timeout", fmt.Sprintf("longest build of an index that a PostgreSQL migration adds to an existing table, and longest wait for another process's migration (default %s, at least %s) (CREDO_MIGRATION_TIMEOUT)", c.DB.MigrationTimeout, minTimeout),
		func(v string) error { return setDuration(&c.DB.MigrationTimeout, v, minTimeout) })
}

// poolFlags declares the size of serve's connection pool.
func (c *config) poolFlags(fs *flag.FlagSet) {
	fs.Func("database-max-conns",
		fmt.Sprintf("connections to the database: the pool of each PostgreSQL database (default %d, plus 1 for health checks), or the read pool of each SQLite partition (default %d, plus 1 writer) (CREDO_DATABASE_MAX_CONNS)",
			engine.DefaultPostgresMaxConns, engine.DefaultSQLiteMaxConns),
		func(v string) error { return setPositiveInt(&c.DB.MaxConns, v) })
}

// descriptorFlags declares the extra descriptor folders.
func (c *config) descriptorFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.descriptors, "descriptors", c.descriptors, "extra descriptor folders, colon-separated (CREDO_DESCRIPTORS)")
}

// servingFlags declares what serve listens on and which partitions it serves.
func (c *config) servingFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address (CREDO_ADDR)")
	fs.StringVar(&c.partitions, "partitions", c.partitions, "comma-separated partitions (CREDO_PARTITIONS)")
	fs.StringVar(&c.V1Partition, "v1-partition", c.V1Partition, "partition served by /api (CREDO_V1_PARTITION; default the first partition)")
}

// partitionFlag declares --partition for a command that works on one partition and returns
// the function that resolves it once the flags are parsed: the flag, or else the partition
// that CREDO_PARTITIONS configures when it names exactly one.
func (c *config) partitionFlag(fs *flag.FlagSet, what string) func() (string, error) {
	p := fs.String("partition", "", what+" (default the one partition of CREDO_PARTITIONS)")
	return func() (string, error) {
		if *p != "" {
			c.Partitions = []string{*p}
			return *p, nil
		}
		if len(c.Partitions) != 1 {
			return "", usageErrorf("--partition is required: CREDO_PARTITIONS names %d partitions (%s)",
				len(c.Partitions), strings.Join(c.Partitions, ", "))
		}
		return c.Partitions[0], nil
	}
}

// finish checks and completes the configuration once the flags are parsed; its errors are
// usage errors.
func (c *config) finish() error {
	if len(c.problems) > 0 {
		return usageErrorf("%s", strings.Join(c.problems, "; "))
	}
	c.Partitions = nil
	for _, p := range strings.Split(c.partitions, ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.Partitions = append(c.Partitions, p)
		}
	}
	if len(c.Partitions) == 0 {
		return usageErrorf("no partitions configured")
	}
	c.configured = c.Partitions
	if c.V1Partition == "" {
		c.V1Partition = c.Partitions[0]
	}
	found := false
	for _, p := range c.Partitions {
		found = found || p == c.V1Partition
	}
	if !found {
		return usageErrorf("--v1-partition %q is not among --partitions %s", c.V1Partition, strings.Join(c.Partitions, ","))
	}
	c.Descriptors = nil
	for _, d := range strings.Split(c.descriptors, ":") {
		if d = strings.TrimSpace(d); d != "" {
			c.Descriptors = append(c.Descriptors, d)
		}
	}
	return nil
}

// registry loads the embedded descriptors and any extra folders.
func (c *config) registry() (*engine.Registry, error) {
	fss := []iofs.FS{resources.FS}
	for _, d := range c.Descriptors {
		fss = append(fss, os.DirFS(d))
	}
	return engine.Load(fss...)
}

// open loads the descriptors and opens (and migrates) every configured partition (see
// openDatabase).
func (c *config) open(ctx context.Context) (*engine.Registry, *engine.Database, error) {
	reg, err := c.registry()
	if err != nil {
		return nil, nil, err
	}
	db, err := c.openDatabase(ctx, reg)
	if err != nil {
		return nil, nil, err
	}
	return reg, db, nil
}

// openDatabase opens (and migrates) every configured partition, each on the database its
// placement names or else on --database: one pool and one migration per database.
func (c *config) openDatabase(ctx context.Context, reg *engine.Registry) (*engine.Database, error) {
	placed, err := c.placed()
	if err != nil {
		return nil, err
	}
	return c.DB.OpenPlaced(ctx, c.Database, placed, c.Partitions, reg)
}
