// Package postgres is the engine's PostgreSQL driver (pgx, its pool, COPY and GORM's
// dialector), linked into a program by importing it for its side effect:
//
//	import _ "credo/engine/postgres"
package postgres
