// Package housekeeping runs the server's periodic clean-ups (expired tokens, exports,
// idempotency keys) in one kind of loop.
package housekeeping

import (
	"context"
	"log/slog"
	"time"
)

// Every runs pass at once and then every interval until ctx ends. pass returns how many
// records it removed; a failure is logged with what and retried at the next interval, a pass
// that removed something is logged with the count.
func Every(ctx context.Context, every time.Duration, what string, pass func(context.Context) (int64, error)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if n, err := pass(ctx); err != nil && ctx.Err() == nil {
			slog.Error("housekeeping failed", "what", what, "err", err)
		} else if n > 0 {
			slog.Info("housekeeping removed expired records", "what", what, "records", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
