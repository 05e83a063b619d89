// Package groupsuite exercises every record group of a registry through HTTP, generated from
// the descriptors, against any server that serves them: an httptest server of the handlers or
// real credo processes behind a proxy.
package groupsuite
