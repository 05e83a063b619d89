// Package route describes the hand-written v2 operations that modules add beside the generated
// record-group routes, so that one router authenticates, authorizes and documents them all.
package route

import "credo/handlers/problem"

// Access says who may call a route.
type Access int

// The access levels of a route.
const (
	// Protected routes need a credential and the permission flag Need on Object.
	Protected Access = iota
	// Public routes answer without a credential (decisions §7).
	Public
	// Authenticated routes need a credential but no permission.
	Authenticated
)

// Route is one hand-written v2 operation, relative to /v2/{partition}/.
type Route struct {
	// Method is the HTTP method; Path is relative to the partition, e.g. "platform/health".
	Method, Path string
	// Summary is one sentence for OpenAPI and security/settings/endpoints.
	Summary string
	Access  Access
	// Object is the permission object's path (a record group path such as
	// "progress/gradebooks", or the route's own path for plugins and commands).
	Object string
	// Need is the permission flag: Read, Write, Create, Delete, Execute, Administrate, Configure.
	Need string
	// Handler serves the route; the partition's store is in the request context (engine.StoreFrom)
	// and the caller in auth.FromContext.
	Handler problem.HandlerFunc
}
