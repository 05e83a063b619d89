package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"credo/engine/backend"
)

// cancelHandler is what a connection of the pool does when the context of its statement is
// cancelled or expires. By default it is pgx's own: a deadline on the socket, so that the
// statement fails at once and pgx closes the connection; PostgreSQL goes on running the
// statement until it next talks to the client. A request's statements never see a cancelled
// context (see Deadlines in credo/engine), and a statement that expires is short.
//
// A statement whose context asks for it (backend.CancelInServer: a migration's, an index
// build that may run for an hour) and is cancelled gets pgx's cancel request instead:
// PostgreSQL stops the statement (SQLSTATE 57014), the statement returns that error, and the
// connection stays usable, so that the migration can release its session's lock. A build left running in
// PostgreSQL after its process exited held its lock and snapshot, and the next replica of a
// rolling deploy waited for it. Should PostgreSQL not answer the cancel within
// backend.ServerCancelGrace, the socket's deadline ends the statement as by default.
//
// A statement still running ServerCancelGrace after its cancel request was ended by the
// deadline, not by PostgreSQL: the handler tells its context (backend.CancelNotConfirmed), so
// that whichever step ran it, start-up reports that it may still run there (exit status 3).
type cancelHandler struct {
	deadline pgconn.DeadlineContextWatcherHandler
	cancel   pgconn.CancelRequestContextWatcherHandler
	used     ctxwatch.Handler
	// ctx and sent are the statement's context and when its cancel began (the request goes
	// out then, and the socket's deadline is set ServerCancelGrace on), while the cancel path
	// is in use.
	ctx  context.Context
	sent time.Time
}

var _ ctxwatch.Handler = (*cancelHandler)(nil)

// newCancelHandler is the pool's BuildContextWatcherHandler.
func newCancelHandler(c *pgconn.PgConn) ctxwatch.Handler {
	return &cancelHandler{
		deadline: pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()},
		cancel:   pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: backend.ServerCancelGrace},
	}
}

func (h *cancelHandler) HandleCancel(ctx context.Context) {
	h.used = &h.deadline
	// Only a cancellation: a statement past its deadline keeps failing as a timeout, which
	// start-up reports as the database not answering (a build's own bound is the session's
	// statement_timeout, which PostgreSQL enforces itself).
	if backend.CancelsInServer(ctx) && errors.Is(ctx.Err(), context.Canceled) {
		h.used, h.ctx, h.sent = &h.cancel, ctx, time.Now()
	}
	h.used.HandleCancel(ctx)
}

// HandleUnwatchAfterCancel runs once the statement has returned. On the cancel path, a
// statement that returned ServerCancelGrace or more after its cancel began returned at or
// after the socket's deadline: PostgreSQL did not answer the request in time. Judged so, a confirmation that arrived just at the grace counts as none, never
// the other way round.
func (h *cancelHandler) HandleUnwatchAfterCancel() {
	if h.used == nil {
		return
	}
	took := time.Since(h.sent)
	h.used.HandleUnwatchAfterCancel()
	if h.used == &h.cancel && took >= backend.ServerCancelGrace {
		backend.CancelNotConfirmed(h.ctx)
	}
	h.used, h.ctx = nil, nil
}
