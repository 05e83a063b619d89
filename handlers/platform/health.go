package platform

import (
	"context"
	"errors"
	"net/http"
	"time"

	"credo/handlers/observe"
	"credo/handlers/problem"
)

// HealthTimeout bounds the database ping of the health operation, so that a monitor gets its
// 503 quickly when the database hangs instead of waiting for its own timeout.
const HealthTimeout = 2 * time.Second

// Health is the body of the health operation (decisions §8). It has the same shape for 200 and
// 503, so that monitors read one format; the 503 is not a problem document because the request
// itself was fine.
type Health struct {
	// Status is "Healthy" or "Unhealthy".
	Status  string      `json:"Status"`
	Version string      `json:"Version"`
	Env     Environment `json:"Environment"`
	// Database is "ok" or "unreachable".
	Database string `json:"Database"`
}

// Environment names the partition that answered.
type Environment struct {
	Name string `json:"Name"`
	Slug string `json:"Slug"`
}

// health pings the partition's database. The store's pool reconnects by itself, so a database
// that comes back makes the next call healthy again without a restart.
func (c Config) health(w http.ResponseWriter, r *http.Request) error {
	store, err := storeOf(r)
	if err != nil {
		return err
	}
	name := c.Environments[store.Partition]
	if name == "" {
		name = store.Partition
	}
	out := Health{Status: "Healthy", Version: c.Version, Env: Environment{Name: name, Slug: store.Partition}, Database: "ok"}
	status := http.StatusOK
	ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
	defer cancel()
	if err := store.Ping(ctx); err != nil {
		if errors.Is(r.Context().Err(), context.Canceled) {
			return r.Context().Err() // the caller left; nothing to report
		}
		// The cause (host, driver message) is for the log, not for anonymous callers; the log
		// reports it as part of the partition's outage, not once per check.
		observe.Unavailable(r, store.Partition, err)
		out.Status, out.Database, status = "Unhealthy", "unreachable", http.StatusServiceUnavailable
	}
	if status == http.StatusOK {
		observe.Available(r, store.Partition)
	}
	w.Header().Set("Cache-Control", "no-store")
	return problem.JSON(w, status, out)
}
