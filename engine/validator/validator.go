// Package validator is the validator of descriptors' validate tags
// (github.com/go-playground/validator), linked into a program by importing it for its side
// effect:
//
//	import _ "credo/engine/validator"
package validator

import (
	playground "github.com/go-playground/validator/v10"

	"credo/engine/backend"
)

func init() { backend.RegisterValidator(playground.New()) }
