package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"credo/engine"
	_ "credo/handlers/people"   // group-slug, membership-deletion
	_ "credo/handlers/security" // permission-mask
	"credo/resources"
)

// The hooks the descriptors name are registered by the packages that own them (imported
// above); the engine's tests load those descriptors, so they link the owners as any program
// serving them must.

// TestRegisterHookRefusesMistakes: a hook registered twice, without a phase, with both
// phases, with a malformed name or deriving a member from members it does not declare is a programming error that stops the program at once.
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
		"derives an undeclared member": {Name: "test-derives-undeclared", Members: []string{"GroupName"},
			Derives: map[string][]string{"GroupSlug": {"GroupName"}}, BeforeWrite: before},
		"derives from an undeclared member": {Name: "test-derives-from-undeclared", Members: []string{"GroupSlug"},
			Derives: map[string][]string{"GroupSlug": {"GroupName"}}, BeforeWrite: before},
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

// TestRecordSetRefusesAWrongGoType: a hook that sets a member to a Go type the record does not
// hold for it (an int for an int member, a time.Time for a datetime, a string for a bool)
// panics naming the member, where the value was once stored, answered as null and tagged
// unlike a get's reading of it; nil and the right types are kept.
func TestRecordSetRefusesAWrongGoType(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	perm, book := reg.MustByName("Permission"), reg.MustByName("Gradebook")
	for _, c := range []struct {
		r      *engine.Resource
		member string
		v      any
		ok     bool
	}{
		{perm, "PermissionMask", int64(3), true},
		{perm, "PermissionMask", nil, true},
		{perm, "PermissionMask", 3, false},
		{perm, "PermissionMask", "3", false},
		{book, "LastChangeTime", engine.DateTime{Time: time.Now()}, true},
		{book, "LastChangeTime", time.Now(), false},
		{book, "GradebookTitle", "Year 9", true},
		{book, "GradebookTitle", []byte("Year 9"), false},
		{book, "IsLocked", true, true},
		{book, "IsLocked", "true", false},
	} {
		rec := c.r.NewRecord()
		panicked := func() (p any) {
			defer func() { p = recover() }()
			rec.Set(c.r, c.member, c.v)
			return nil
		}()
		switch {
		case c.ok && panicked != nil:
			t.Errorf("%s.%s = %T: panicked %v", c.r.Name, c.member, c.v, panicked)
		case c.ok && rec.Get(c.r, c.member) != c.v:
			t.Errorf("%s.%s = %#v: kept %#v", c.r.Name, c.member, c.v, rec.Get(c.r, c.member))
		case !c.ok && (panicked == nil || !strings.Contains(fmt.Sprint(panicked), c.member)):
			t.Errorf("%s.%s = %T: panic %v, want one naming the member", c.r.Name, c.member, c.v, panicked)
		}
	}
}

// TestCheckingHookValuesAllocatesNothing: holding what the beforeWrite hooks derived to the
// member rules allocates nothing beyond what the hooks allocate, for the hook with the most
// members (permission-mask, 8) and the one that builds a string (group-slug).
func TestCheckingHookValuesAllocatesNothing(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r, derived string
		members    map[string]any
	}{
		{"Permission", "PermissionMask", map[string]any{"AllowRead": true, "AllowWrite": true, "AllowAdministrate": true}},
		{"Group", "GroupSlug", map[string]any{"GroupName": "Year 9 Teachers"}},
	} {
		r := reg.MustByName(c.r)
		rec := r.NewRecord()
		for m, v := range c.members {
			rec.Set(r, m, v)
		}
		// The derived member is cleared before each run, so that the hook changes it and the
		// check judges it.
		hooks := testing.AllocsPerRun(100, func() {
			rec.Set(r, c.derived, nil)
			_ = r.RunHooks(rec)
		})
		checked := testing.AllocsPerRun(100, func() {
			rec.Set(r, c.derived, nil)
			if err := r.RunBeforeWrite(rec); err != nil {
				t.Fatal(err)
			}
		})
		if checked != hooks {
			t.Errorf("%s: %v allocations with the check, %v for the hooks alone", c.r, checked, hooks)
		}
	}
}
