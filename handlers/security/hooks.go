package security

import (
	"credo/auth"
	"credo/engine"
)

// The permission-mask hook belongs to security: PermissionMask is what auth authorizes with,
// so its bits are auth's (auth.Flag.Bit), which the engine cannot import.
func init() {
	var flags []string
	for _, f := range maskFlags() {
		flags = append(flags, "Allow"+string(f))
	}
	engine.RegisterHook(engine.Hook{Name: "permission-mask", Members: append([]string{"PermissionMask"}, flags...),
		Derives: map[string][]string{"PermissionMask": flags}, BeforeWrite: permissionMask})
}

// maskFlags are the flags with a bit in PermissionMask (TrialAccess has none).
func maskFlags() []auth.Flag {
	var out []auth.Flag
	for _, f := range auth.Flags() {
		if f.Bit() != 0 {
			out = append(out, f)
		}
	}
	return out
}

// permissionMask sets PermissionMask from the Allow flags, ignoring any client value.
func permissionMask(r *engine.Resource, rec engine.Record) error {
	var m int64
	for _, f := range maskFlags() {
		if rec.Get(r, "Allow"+string(f)) == true {
			m |= f.Bit()
		}
	}
	rec.Set(r, "PermissionMask", m)
	return nil
}
