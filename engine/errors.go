package engine

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/puddle/v2"

	"credo/engine/backend"
)

// Error categories. Every error the engine returns wraps one of them or is a bug (500);
// handlers map categories to statuses in one table.
var (
	// ErrNotFound: the record does not exist, or is outside the caller's scope.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request is malformed or breaks a field rule (see ValidationError).
	ErrInvalid = errors.New("invalid")
	// ErrConflict: the record would break a key or unique constraint.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the database cannot serve the request now — it cannot be reached, did
	// not answer within the store's timeout, refuses connections, or another transaction held
	// a lock the request needed past that timeout; a retry may succeed. Beyond the first of
	// these, a DatabaseError says which (Reason).
	ErrUnavailable = errors.New("unavailable")
	// ErrNotMigrated: the partition's tables lack a table or column that its descriptors need
	// (an operator dropped or renamed one while credo serves), as Ready finds; a DatabaseError.
	// Nothing a client sends causes it, and a retry succeeds once the partition is migrated
	// again.
	ErrNotMigrated = errors.New("not migrated")
	// ErrAborted: PostgreSQL aborted the transaction to let a concurrent one proceed (a
	// deadlock, or a serialization failure); it was rolled back, nothing of it was written,
	// and the same request, retried as it is, may succeed. Not an outage of the database.
	ErrAborted = errors.New("aborted by a concurrent transaction")
	// ErrNoSpace: the database has no space left to store a change — SQLite's file system is
	// full (SQLITE_FULL), PostgreSQL's disk is (SQLSTATE 53100); a DatabaseError. The change
	// was rolled back whole, reads go on, and writes succeed again once the operator frees
	// space, without a restart. Not an outage of the database, which answers.
	ErrNoSpace = errors.New("no space")
)

// ValidationError lists problems per member name; it is an ErrInvalid (or ErrConflict when
// Conflict is set).
type ValidationError struct {
	Detail   string
	Fields   map[string][]string
	Conflict bool
}

// Invalid returns a ValidationError with a detail and no member problems.
func Invalid(format string, args ...any) *ValidationError {
	return &ValidationError{Detail: fmt.Sprintf(format, args...)}
}

// InvalidMember returns a ValidationError naming one member.
func InvalidMember(member, format string, args ...any) *ValidationError {
	e := &ValidationError{}
	e.Add(member, fmt.Sprintf(format, args...))
	return e
}

// Add records a problem with a member.
func (e *ValidationError) Add(member, msg string) {
	if e.Fields == nil {
		e.Fields = map[string][]string{}
	}
	e.Fields[member] = append(e.Fields[member], msg)
}

// Empty reports whether no problem was recorded.
func (e *ValidationError) Empty() bool { return e.Detail == "" && len(e.Fields) == 0 }

func (e *ValidationError) Error() string {
	if e.Detail != "" && len(e.Fields) == 0 {
		return e.Detail
	}
	var msgs []string
	seen := map[string]bool{}
	for _, m := range e.Members() {
		for _, msg := range e.Fields[m] {
			if !seen[msg] {
				seen[msg] = true
				msgs = append(msgs, msg)
			}
		}
	}
	s := strings.Join(msgs, "; ")
	if e.Detail != "" {
		s = e.Detail + ": " + s
	}
	return s
}

// Limit returns e with the problems of its first n members (in Members order) and the
// number of members left out; e itself when it names no more than n.
func (e *ValidationError) Limit(n int) (*ValidationError, int) {
	if len(e.Fields) <= n {
		return e, 0
	}
	out := &ValidationError{Detail: e.Detail, Fields: make(map[string][]string, n), Conflict: e.Conflict}
	for _, m := range e.Members()[:n] {
		out.Fields[m] = e.Fields[m]
	}
	return out, len(e.Fields) - n
}

// Members returns the member names with problems, sorted.
func (e *ValidationError) Members() []string {
	var names []string
	for n := range e.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Is makes errors.Is(err, ErrInvalid) (or ErrConflict) true.
func (e *ValidationError) Is(target error) bool {
	if e.Conflict {
		return target == ErrConflict
	}
	return target == ErrInvalid
}

// Translate maps an error that a module got from a Store's DB handle to its category, as the
// store's verbs do: the one place that knows the drivers' error shapes. An error it does not
// recognise is returned as it is. Without the store, a DatabaseError's reason cannot name the
// partition or the timeout; Store.Translate can.
func Translate(err error) error { return translate(nil, nil, err) }

// Translate is the package's Translate for an error of the store's: a DatabaseError's reason
// names its partition and its timeout.
func (s *Store) Translate(err error) error { return translate(s, nil, err) }

// translate turns a driver error into a category; it is the only place that knows the
// drivers' error shapes. s is the store whose statement failed, for the partition and the
// timeout that a DatabaseError's reason names (nil: not known); r names the resource for
// unique-constraint messages (nil: none).
func translate(s *Store, r *Resource, err error) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrConflict) ||
		errors.Is(err, ErrUnavailable) || errors.Is(err, ErrAborted) || errors.Is(err, ErrNotMigrated) ||
		errors.Is(err, ErrNoSpace) {
		return err
	}
	var pg backend.Error
	if d := backend.LinkedPostgres(); d != nil {
		pg = d.Classify(err)
	}
	if pg.Code != "" {
		switch {
		case pg.Code == "23505":
			return conflict(r, constraintFields(r, pg.Constraint, ""))
		case pg.Code == "22P02", pg.Code == "22007", pg.Code == "22008", pg.Code == "22003":
			return fmt.Errorf("%w: %v", ErrInvalid, pg.Message)
		case pg.Code == "22021", pg.Code == "22P05":
			// Invalid UTF-8 or U+0000 in a value: every edge refuses them naming the member
			// (CheckText); should a path miss that check, the client still gets a 400.
			return fmt.Errorf("%w: %v", ErrInvalid, pg.Message)
		case pg.Code == "42703", pg.Code == "42P01": // undefined_column, undefined_table
			return notMigrated(s, err)
		case pg.Code == "55P03": // lock_not_available: the session's lock_timeout
			return lockTimedOut(s, err)
		case pg.Code == "57014": // query_canceled: a statement_timeout of the server's, or a cancel
			return cancelled(pg.Message, err)
		case pg.Code == "53100": // disk_full
			return noSpace("PostgreSQL's disk", err)
		case backend.Refused(pg.Code), strings.HasPrefix(pg.Code, "08"):
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		case pg.Code == "40P01", // deadlock_detected
			pg.Code == "40001": // serialization_failure
			return fmt.Errorf("%w: %v", ErrAborted, err)
		}
		return err
	}
	msg := err.Error()
	if d := backend.LinkedSQLite(); d != nil {
		switch code := d.Code(err); {
		case code == backend.SQLiteFull:
			return noSpace("the file system of the partition's database file", err)
		case code == backend.SQLitePerm, code == backend.SQLiteReadOnly, code == backend.SQLiteIOErr, code == backend.SQLiteCantOpen:
			return unwritable(err)
		case code == backend.SQLiteBusy, code == backend.SQLiteLocked:
			return fileBusy(s, err)
		case code == backend.SQLiteError && undefinedName(msg):
			return notMigrated(s, err)
		}
	}
	if i := strings.Index(msg, "UNIQUE constraint failed: "); i >= 0 {
		return conflict(r, constraintFields(r, "", msg[i+len("UNIQUE constraint failed: "):]))
	}
	if strings.Contains(msg, "constraint failed: PRIMARY KEY") {
		var key []*Field
		if r != nil {
			key = r.Key
		}
		return conflict(r, key)
	}
	if timedOut(err) {
		return unanswered(s, err)
	}
	var ce interface{ Timeout() bool }
	if errors.As(err, &ce) || pg.ConnectFailed ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, puddle.ErrClosedPool) ||
		strings.Contains(msg, "connection refused") || strings.Contains(msg, "failed to connect") {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if backend.Disconnected(err) || pg.Closed {
		return fmt.Errorf("%w: the connection to the database was lost: %v", ErrUnavailable, err)
	}
	return err
}

// undefinedName reports whether msg, the message of an SQLITE_ERROR, is a statement naming a
// table or column that does not exist: SQLite has no code of its own for these.
func undefinedName(msg string) bool {
	return strings.Contains(msg, "no such column: ") || strings.Contains(msg, "no such table: ") ||
		strings.Contains(msg, " has no column named ") // an INSERT's
}

// constraintFields finds the fields of a violated unique constraint, from PostgreSQL's
// constraint name or SQLite's "table.col, table.col" list (or "index 'name'" for an index on
// expressions).
func constraintFields(r *Resource, name, sqliteCols string) []*Field {
	if r == nil {
		return nil
	}
	if name != "" {
		if name == r.Table+"_pkey" {
			return r.Key
		}
		for _, u := range r.Unique {
			if uniqueIndexName(r, u) == name || u.replaces(r) == name {
				return u.Fields
			}
		}
		return nil
	}
	if rest, ok := strings.CutPrefix(sqliteCols, "index '"); ok {
		// An index on expressions (a constraint that folds case) is named, not its columns.
		name, _, _ = strings.Cut(rest, "'")
		return constraintFields(r, name, "")
	}
	var cols []string
	for _, c := range strings.Split(sqliteCols, ",") {
		c = strings.TrimSpace(c)
		if i := strings.Index(c, " "); i >= 0 {
			c = c[:i] // SQLite appends the extended code, e.g. " (2067)"
		}
		if i := strings.LastIndex(c, "."); i >= 0 {
			c = c[i+1:]
		}
		cols = append(cols, c)
	}
	for _, set := range append([][]*Field{r.Key}, fieldsOf(r.Unique)...) {
		if len(set) != len(cols) {
			continue
		}
		match := true
		for i, f := range set {
			match = match && f.Column == cols[i]
		}
		if match {
			return set
		}
	}
	return nil
}

func conflict(r *Resource, fields []*Field) error {
	e := &ValidationError{Conflict: true}
	if len(fields) == 0 {
		e.Detail = "the record breaks a unique constraint"
		return e
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	what := "key"
	if !fields[0].Key {
		what = "unique constraint"
	}
	msg := fmt.Sprintf("another %s already has this %s (%s)", r.Name, what, strings.Join(names, ", "))
	for _, n := range names {
		e.Add(n, msg)
	}
	// A member a beforeWrite hook derives is named too by the members it derives from, which
	// the client sent and can change (see addDerivedProblem).
	for _, f := range fields {
		if from := r.derivedFrom[f]; len(from) > 0 {
			derived := fmt.Sprintf("%s; the server derives %s from %s", msg, f.Name, fieldNames(from))
			for _, s := range from {
				e.Add(s.Name, derived)
			}
		}
	}
	return e
}
