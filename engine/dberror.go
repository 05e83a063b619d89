package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"credo/engine/backend"
)

// DatabaseError is a failure of the partition's database that is not the client's doing, with
// what happened in words a client may read: an ErrUnavailable that is not the database being
// out of reach (a statement that did not finish in time, a lock that another transaction held
// too long), or an ErrNotMigrated. Its Reason names no SQL, table or column; the driver's error
// (Err) is for the log.
type DatabaseError struct {
	// Category is ErrUnavailable, ErrNotMigrated or ErrNoSpace.
	Category error
	// Reason is what happened, a clause for a client: "the database did not answer within 10s".
	Reason string
	// Locked: another transaction or process held a lock the request needed; the database
	// answers, so this is no outage of it.
	Locked bool
	// Err is the driver's error, nil when the engine found the failure itself.
	Err error
}

func (e *DatabaseError) Error() string {
	if e.Err == nil {
		return e.Category.Error() + ": " + e.Reason
	}
	return e.Category.Error() + ": " + e.Reason + ": " + e.Err.Error()
}

func (e *DatabaseError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, e.Category) true.
func (e *DatabaseError) Is(target error) bool { return target == e.Category }

// Reason returns what the DatabaseError in err's chain says happened, "" when there is none
// (a database that cannot be reached, or refuses connections: the category says it all).
func Reason(err error) string {
	var e *DatabaseError
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// Locked reports whether err is a request that waited past its timeout for a lock that another
// transaction or process held, rather than for a database that does not answer.
func Locked(err error) bool {
	var e *DatabaseError
	return errors.As(err, &e) && e.Locked
}

// unanswered is a statement, or a wait for a connection, that reached the store's timeout.
func unanswered(s *Store, err error) error {
	return &DatabaseError{Category: ErrUnavailable, Reason: "the database did not answer within " + timeoutText(s), Err: err}
}

// lockTimedOut is a PostgreSQL statement that waited for a lock past the session's lock_timeout
// (backend.LockTimeout; SQLSTATE 55P03).
func lockTimedOut(s *Store, err error) error {
	within := "its lock timeout"
	if s != nil {
		within = backend.LockTimeout(s.timeout).String()
	}
	return &DatabaseError{Category: ErrUnavailable, Locked: true, Err: err,
		Reason: "another transaction held a lock the request needed (on a record it writes, or on its table) for more than " + within}
}

// cancelled is a PostgreSQL statement that the server cancelled (SQLSTATE 57014, msg its
// message): past a statement_timeout set on the database or the role (credo sets none on the
// request pool's sessions: their statements end at the store's timeout, in the client), or at an
// administrator's request (pg_cancel_backend).
func cancelled(msg string, err error) error {
	reason := "the database cancelled the statement (an administrator's request)"
	if strings.Contains(msg, "statement timeout") {
		reason = "the database cancelled the statement at the statement_timeout set on the database or its role"
	}
	return &DatabaseError{Category: ErrUnavailable, Reason: reason, Err: err}
}

// noSpace is a write that the database had no space for (where: whose disk is full). Its
// reason says what became of the change, and nothing of what the caller goes on doing: the
// server's 503 adds that reads are served (handlers/problem), credo load prints it as it is.
func noSpace(where string, err error) error {
	return &DatabaseError{Category: ErrNoSpace, Err: err,
		Reason: "the database has no space left to store the change (" + where + " is full); nothing was written"}
}

// unwritable is a SQLite file that cannot be written or opened for a reason of its environment:
// its permissions, a read-only or failing file system (SQLITE_READONLY, SQLITE_PERM,
// SQLITE_CANTOPEN, SQLITE_IOERR).
func unwritable(err error) error {
	return &DatabaseError{Category: ErrUnavailable, Err: err,
		Reason: "the partition's database file cannot be written (its permissions, or its file system)"}
}

// fileBusy is a SQLite statement that waited for another process's lock on the partition's
// file past busy_timeout, which is the store's timeout (SQLITE_BUSY).
func fileBusy(s *Store, err error) error {
	return &DatabaseError{Category: ErrUnavailable, Locked: true, Err: err,
		Reason: "another process (credo load, seed or secret, or another serve) held the partition's database file for writing for more than " + timeoutText(s)}
}

// writerBusy is a SQLite write that waited for the partition's writer connection past the
// timeout: another request's transaction held it (see sqlitePool.acquire).
func writerBusy(timeout time.Duration) error {
	return &DatabaseError{Category: ErrUnavailable, Locked: true,
		Reason: fmt.Sprintf("another writer held the database for more than %v", timeout)}
}

// timeoutText is the store's timeout as a reason says it; without a store (Translate) it is not
// known.
func timeoutText(s *Store) string {
	if s == nil {
		return "the database timeout"
	}
	return s.timeout.String()
}
