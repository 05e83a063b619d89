// Package cluster runs credo as it runs in production, for tests: the binary built once,
// processes started on a shared database and stopped by signal, and a round-robin reverse
// proxy in front of them, as a load balancer would be.
package cluster
