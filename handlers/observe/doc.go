// Package observe makes credo's HTTP service watchable: it gives every request an id, writes
// one access line per request, counts requests and events in Prometheus metrics, and keeps the
// log of failing requests bounded when a database fails.
package observe
