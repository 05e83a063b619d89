package engine_test

import (
	"context"
	"testing"

	"credo/engine"
	_ "credo/handlers/people"   // group-slug, membership-deletion
	_ "credo/handlers/security" // permission-mask
)

// The hooks the descriptors name are registered by the packages that own them (imported
// above); the engine's tests load those descriptors, so they link the owners as any program
// serving them must.

// TestRegisterHookRefusesMistakes: a hook registered twice, without a phase, with both
// phases or with a malformed name is a programming error that stops the program at once.
func TestRegisterHookRefusesMistakes(t *testing.T) {
	before := func(*engine.Resource, engine.Record) error { return nil }
	for name, h := range map[string]engine.Hook{
		"registered twice": {Name: "permission-mask", BeforeWrite: before},
		"no phase":         {Name: "test-no-phase"},
		"both phases": {Name: "test-both", BeforeWrite: before,
			AfterDelete: func(map[string]*engine.Resource) engine.AfterDeleteHook {
				return func(ctx context.Context, tx *engine.Store, r *engine.Resource, rec engine.Record) error { return nil }
			}},
		"malformed name": {Name: "Test_Hook", BeforeWrite: before},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: RegisterHook did not panic", name)
				}
			}()
			engine.RegisterHook(h)
		}()
	}
}
