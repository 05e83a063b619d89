package engine

// The tests of the engine, internal and external, open both stores and load descriptors with
// validate tags: they link what a program links.
import (
	_ "credo/engine/postgres"
	_ "credo/engine/sqlite"
	_ "credo/engine/validator"
)
