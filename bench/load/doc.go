// Package load drives an HTTP/1.1 server on the loopback interface with a fixed number of
// keep-alive connections for a bounded time, and summarises throughput and latency.
package load
