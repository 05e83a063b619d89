package engine

import (
	"context"
	"fmt"
	"strings"
)

// maxSnapshot is how many members of a record serverSet's callers remember on the stack:
// more than any descriptor with a beforeWrite hook or a write check has (Permission, the
// most, has 16). A record with more is remembered in an allocation.
const maxSnapshot = 32

// serverCode is code of the server that sets members of a record being written — a
// beforeWrite hook, or the write checks of r — with the members it may set, by Field.Index.
type serverCode struct {
	what string // "beforeWrite hook group-slug", for errors
	may  []bool
}

// boundHook is a beforeWrite hook attached to r, with the members it declares (Hook.Members).
type boundHook struct {
	serverCode
	run BeforeWriteHook
}

// addBeforeWrite attaches h to r: the hook, the members it declares, and what each member it
// sets derives from (Hook.Derives), which names its problems (addDerivedProblem).
func (r *Resource) addBeforeWrite(h Hook) {
	b := boundHook{serverCode{what: "beforeWrite hook " + h.Name, may: make([]bool, len(r.Members))}, h.BeforeWrite}
	for _, m := range h.Members {
		b.may[r.byName[m].Index] = true
	}
	r.beforeWrite = append(r.beforeWrite, b)
	for m, from := range h.Derives {
		f := r.byName[m]
		if r.derivedFrom == nil {
			r.derivedFrom = map[*Field][]*Field{}
		}
		for _, s := range from {
			if src := r.byName[s]; !containsField(r.derivedFrom[f], src) {
				r.derivedFrom[f] = append(r.derivedFrom[f], src)
			}
		}
	}
}

// addWriteChecks records that r's write checks (Authorize) may set its read-only stored
// members and no other (see WriteCheck).
func (r *Resource) addWriteChecks() {
	if len(r.Authorize) == 0 {
		return
	}
	r.checks = serverCode{what: "write check " + strings.Join(r.Authorize, ", "), may: make([]bool, len(r.Members))}
	for _, f := range r.Fields {
		r.checks.may[f.Index] = f.ReadOnly
	}
}

// runBeforeWrite runs r's beforeWrite hooks on rec, a completed record without problems, and
// holds what they set to the rules of serverSet: a member a hook does not declare is a
// programming error, and each member whose value they changed obeys the rules a client's value
// does. A member a hook leaves as it was (a patch's stored slug of an unchanged name) is not
// judged again, so a record stored before a descriptor lowered a maxLength stays patchable, as
// complete keeps it. It allocates nothing when the hooks' values are good, and with one hook
// (every shipped descriptor) it copies the record once and compares it once.
func (r *Resource) runBeforeWrite(rec Record) error {
	if len(r.beforeWrite) == 0 {
		return nil
	}
	var buf [maxSnapshot]any
	before := append(buf[:0], rec...)
	if len(r.beforeWrite) == 1 {
		h := r.beforeWrite[0]
		if err := h.run(r, rec); err != nil {
			return err
		}
		return r.serverSet(h.serverCode, rec, before)
	}
	// Each hook is held to its own declaration, so that one does not set what another
	// declares; the rules judge what they all changed, once.
	var last [maxSnapshot]any
	for _, h := range r.beforeWrite {
		prev := append(last[:0], rec...)
		if err := h.run(r, rec); err != nil {
			return err
		}
		if err := r.undeclared(h.serverCode, rec, prev); err != nil {
			return err
		}
	}
	return r.serverSet(serverCode{}, rec, before)
}

// runCheck runs check, a write check of r, on the change from old to new (nil on delete), and
// holds what it sets on new to the rules of serverSet: a check sets only read-only members
// (WriteCheck), and each it changed obeys the rules a client's value does, as a beforeWrite
// hook's value does. A refusal is returned as it is.
func (r *Resource) runCheck(ctx context.Context, check WriteCheck, tx *Store, old, new Record) error {
	if new == nil {
		return check(ctx, tx, r, old, nil)
	}
	var buf [maxSnapshot]any
	before := append(buf[:0], new...)
	if err := check(ctx, tx, r, old, new); err != nil {
		return err
	}
	return r.serverSet(r.checks, new, before)
}

// serverSet is the one check of the members that code of the server (a beforeWrite hook, a
// write check) set in rec, which held before's values when the code began. A member the code
// may not set (code.may; nil: the caller has checked) whose value changed is a programming
// error naming the code and the member: no client input can mend it, so it is an error of no
// category (a 500, logged with this text), not a 400; the shipped hooks and check set only what
// they declare, whatever the request. Every member whose value changed is held to the rules
// complete holds a client's value to (writeProblem): a slug past its member's maxLength, a
// byte cut that splits a character, a sum past the 32-bit integers, a null in a member that is
// not nullable is a *ValidationError (see addDerivedProblem), not a value stored as it is
// (SQLite, and PostgreSQL's text columns, keep any length; the columns take a null) or a
// database error. One pass over the record, without allocating when the values are good.
func (r *Resource) serverSet(code serverCode, rec Record, before []any) error {
	var verr *ValidationError
	for i, v := range rec {
		if v == before[i] {
			continue
		}
		f := r.Members[i]
		if code.may != nil && !code.may[i] {
			return undeclaredErr(code, r, f)
		}
		if p := f.writeProblem(v, true); p != "" {
			if verr == nil {
				verr = &ValidationError{}
			}
			r.addDerivedProblem(verr, f, p)
		}
	}
	if verr != nil {
		return verr
	}
	return nil
}

// undeclared returns the error of the first member of rec that code changed from before and
// may not set, nil when there is none.
func (r *Resource) undeclared(code serverCode, rec Record, before []any) error {
	for i, v := range rec {
		if v != before[i] && !code.may[i] {
			return undeclaredErr(code, r, r.Members[i])
		}
	}
	return nil
}

func undeclaredErr(code serverCode, r *Resource, f *Field) error {
	return fmt.Errorf("engine: %s set %s.%s, which it may not set (a hook sets only the members it declares, Hook.Members; a write check only read-only members): a bug of the server, not of the request", code.what, r.Name, f.Name)
}

// addDerivedProblem adds to verr the problem p of f, a member a hook set: under each member
// f derives from (Hook.Derives), which the client sent and can change, saying which member
// broke which rule; under f itself when the hook declares no source (and for a write check's
// values, which derive from the caller and the write's transaction, not from the body).
func (r *Resource) addDerivedProblem(verr *ValidationError, f *Field, p string) {
	from := r.derivedFrom[f]
	if len(from) == 0 {
		verr.Add(f.Name, f.Name+" "+p)
		return
	}
	msg := fmt.Sprintf("%s, which the server derives from %s, %s", f.Name, fieldNames(from), p)
	for _, s := range from {
		verr.Add(s.Name, msg)
	}
}
