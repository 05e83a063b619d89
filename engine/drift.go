package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// driftRecheck is how long a check of the partition's tables against its descriptors (see
// Store.lacks) that found columns missing answers for the statements that fail after it. During
// a drift every request of the group fails; they share one catalog read a second rather than
// queue for the probe's one connection, which the health checks and readiness probes use too.
// A check that found nothing missing is not kept: a drift that begins after it must not be
// taken for a wrong statement.
const driftRecheck = time.Second

// driftCheck is a partition's last check of its tables after a statement named a table or
// column that does not exist; the stores of a partition (its transactions' too) share it.
type driftCheck struct {
	mu      sync.Mutex // held during a check: the statements failing meanwhile wait for it
	at      time.Time
	missing []string
}

// lacks returns the required columns that the partition's tables lack (what Ready reads, on the
// probe's connection): those of a check at most driftRecheck old that found some, or of a new
// check.
func (s *Store) lacks() ([]string, error) {
	c := s.drift
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.missing) > 0 && time.Since(c.at) < driftRecheck {
		return c.missing, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	missing, err := s.missingColumns(ctx)
	c.missing, c.at = missing, time.Now()
	return missing, err
}

// notMigrated is the error of a statement that named a table or column that does not exist
// (PostgreSQL's undefined_table or undefined_column, SQLite's "no such table" or "no such
// column"): an ErrNotMigrated, when the partition's tables lack what its descriptors need, as
// Ready finds and says "not migrated" — an operator dropped or renamed a table or column while
// credo serves. The statements name only the descriptors' tables and columns (a request's
// member names are resolved against them before any SQL is built), so no client causes it.
// Should the tables lack nothing, the statement itself is wrong: err is returned as it is, an
// unexpected error (500) to be fixed, not an operator's to mend. Without a store (Translate),
// or when the check fails, the statement's error is taken at its word.
func notMigrated(s *Store, err error) error {
	which := "the partition's tables do"
	if s != nil {
		which = "the tables of partition " + s.Partition + " do"
		if s.drift != nil {
			missing, cerr := s.lacks()
			switch {
			case cerr == nil && len(missing) == 0:
				return err
			case cerr == nil:
				err = fmt.Errorf("%w; %s", err, s.missingText(missing))
			}
		}
	}
	return &DatabaseError{Category: ErrNotMigrated, Err: err,
		Reason: which + " not match its descriptors (a table or column they need is missing) and must be migrated again, as credo does when it starts"}
}
