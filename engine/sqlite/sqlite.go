// Package sqlite is the engine's SQLite driver (modernc.org/sqlite, registered with
// database/sql as "sqlite"), linked into a program by importing it for its side effect:
//
//	import _ "credo/engine/sqlite"
package sqlite

import (
	"database/sql/driver"
	"errors"
	"fmt"

	"modernc.org/sqlite"

	"credo/engine/backend"
)

func init() { backend.RegisterSQLite(sqliteDriver{}) }

// sqliteDriver is modernc's driver, the current release (see credo/engine's sqlite.go for
// the drivers compared).
type sqliteDriver struct{}

func (sqliteDriver) Driver() string { return "sqlite" }

// RegisterContains registers the function with the driver: every connection it opens has it.
func (sqliteDriver) RegisterContains(name string, contains func(h, n string) bool) {
	sqlite.MustRegisterFunction(name, &sqlite.FunctionImpl{
		NArgs:         2,
		Deterministic: true,
		// The arguments are read during the call only (contains keeps nothing).
		VolatileArgs: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			h, ok1 := argText(args[0])
			n, ok2 := argText(args[1])
			switch {
			case args[0] == nil || args[1] == nil:
				return nil, nil
			case !ok1 || !ok2:
				return nil, fmt.Errorf("%s: text arguments expected, got %T and %T", name, args[0], args[1])
			case contains(h, n):
				return int64(1), nil
			}
			return int64(0), nil
		},
	})
}

// Code returns the primary result code of modernc's error in err's chain (its Code is the
// extended one, e.g. SQLITE_BUSY_SNAPSHOT 517 for SQLITE_BUSY 5).
func (sqliteDriver) Code(err error) int {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return 0
	}
	return e.Code() & 0xff
}

// argText returns a TEXT or BLOB argument as a string.
func argText(v driver.Value) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}
