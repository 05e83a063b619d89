package security

import (
	"context"
	"fmt"
	"time"

	"credo/engine"
)

// PurgeEvery is how often credo serve runs Purge (handlers/housekeeping).
const PurgeEvery = 10 * time.Minute

// PurgeGrace is how long after its expiry a record of an issued or revoked token is kept. It
// exceeds auth.TokenLeeway, the tolerance within which an expired token is still accepted,
// so a revocation never disappears while its token could still be used.
const PurgeGrace = time.Minute

// purgeLock names the advisory lock that keeps the purge to one replica at a time.
const purgeLock = "token-purge"

// Purge removes, in every partition, the issued-token and revoked-token records whose
// credential expired more than PurgeGrace ago: once a token, cookie or secret can no longer be
// used, neither its registration nor its revocation matters, and without the purge both
// tables would grow with every token ever issued. On PostgreSQL a partition is skipped when
// another process is purging it (engine.Store.Exclusive). It returns how many records it
// removed.
func (s *Security) Purge(ctx context.Context) (int64, error) {
	before := engine.DateTime{Time: s.now().Add(-PurgeGrace).UTC()}
	var total int64
	for _, p := range s.db.Partitions() {
		st, err := s.store(p)
		if err != nil {
			return total, err
		}
		_, err = st.Exclusive(ctx, purgeLock, func(tx *engine.Store) error {
			for _, r := range []*engine.Resource{s.rec.issuedToken, s.rec.revokedToken} {
				f, ok := r.Filter("ExpiresBefore")
				if !ok {
					return fmt.Errorf("security: %s has no ExpiresBefore filter", r.Name)
				}
				n, err := tx.DeleteMatching(ctx, r, engine.Query{Conds: []engine.Cond{{Field: f.Field, Op: f.Op, Value: before}}}, engine.AllOrganizations())
				if err != nil {
					return err
				}
				total += n
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("security: purge %s: %w", p, err)
		}
	}
	return total, nil
}
