package engine

import "context"

// WriteCheck decides whether the caller of a request may make a change to a record of r:
// old is the stored record (nil on create), new the completed record about to be stored (nil
// on delete), both with every stored member. It runs in the write's transaction (tx), so what
// it reads is what the write replaces; a non-nil error refuses the write and is returned as
// it is. A check that lets a create, update or patch through may also set read-only members
// of new that only the caller or the write's transaction can give (a grant's grantor, time
// and organization; see Record.Set), and no other member: it runs after the beforeWrite hooks,
// what it sets is held to the rules a hook's values are (serverSet: another member is a
// programming error, a value that breaks a member's rule a *ValidationError naming it), and
// new is stored (and tagged) as the check leaves it. Descriptors name checks in `hooks: authorize:`; the
// server's authorizer supplies them and the router attaches them to each request with
// WithWriteCheck.
type WriteCheck func(ctx context.Context, tx *Store, r *Resource, old, new Record) error

type checkKey struct{ r *Resource }

// WithWriteCheck returns a context whose creates, updates, patches and deletes of r run
// check. It applies to r only, so a hook's writes to other resources are not checked by it.
func WithWriteCheck(ctx context.Context, r *Resource, check WriteCheck) context.Context {
	return context.WithValue(ctx, checkKey{r}, check)
}

// writeCheck returns the check attached to ctx for r, nil when there is none (writes made by
// the process itself: credo load, seeding, the modules' own bookkeeping).
func writeCheck(ctx context.Context, r *Resource) WriteCheck {
	if len(r.Authorize) == 0 {
		return nil
	}
	c, _ := ctx.Value(checkKey{r}).(WriteCheck)
	return c
}
