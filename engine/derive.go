package engine

import "fmt"

// maxHookMembers is how many hook members runBeforeWrite remembers without allocating: more
// than any descriptor's hooks declare (permission-mask, the most, declares 8).
const maxHookMembers = 16

// addHookMembers records the members a beforeWrite hook of r declares, and what each member
// it sets derives from, for checkDerived.
func (r *Resource) addHookMembers(h Hook) {
	for _, m := range h.Members {
		f := r.byName[m]
		if !containsField(r.hookMembers, f) {
			r.hookMembers = append(r.hookMembers, f)
		}
	}
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

// runBeforeWrite runs r's beforeWrite hooks on rec, a completed record without problems, then
// holds each hook member whose value they changed to the rules complete holds a value the
// client gives to (writeProblem): a slug past its member's maxLength, a byte cut that splits a
// character, a sum past the 32-bit integers is a *ValidationError, not a value stored as it
// is (SQLite, and PostgreSQL's text columns, keep any length) or a database error. A member a
// hook leaves as it was (a patch's stored slug of an unchanged name) is not judged again, so a
// record stored before a descriptor lowered a maxLength stays patchable, as complete keeps it.
// It allocates nothing when the hooks' values are good.
func (r *Resource) runBeforeWrite(rec Record) error {
	if len(r.beforeWrite) == 0 {
		return nil
	}
	var buf [maxHookMembers]any
	before := buf[:0]
	for _, f := range r.hookMembers {
		before = append(before, rec[f.Index])
	}
	for _, h := range r.beforeWrite {
		if err := h(r, rec); err != nil {
			return err
		}
	}
	var verr *ValidationError
	for i, f := range r.hookMembers {
		v := rec[f.Index]
		if v == before[i] {
			continue
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

// addDerivedProblem adds to verr the problem p of f, a member a hook set: under each member
// f derives from (Hook.Derives), which the client sent and can change, saying which member
// broke which rule; under f itself when the hook declares no source.
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
