package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// BeforeWriteHook derives members of a record before it is created or updated.
type BeforeWriteHook func(r *Resource, rec Record) error

// AfterDeleteHook runs in the delete's transaction with the deleted record's stored members.
type AfterDeleteHook func(ctx context.Context, tx *Store, r *Resource, rec Record) error

// Hook is per-resource behaviour that cannot be data: descriptors name it (hooks:
// beforeWrite, afterDelete), never `if resource == …` in handlers. The code that owns the
// behaviour registers it (RegisterHook, from its package's init), declaring what it needs, so
// that Load refuses a descriptor naming a hook that is not registered, or whose members its
// resource or the descriptors it uses lack, at the line naming the hook.
type Hook struct {
	Name string
	// Members are the members of the naming descriptor's resource that the hook reads or writes.
	Members []string
	// Uses are the other descriptors the hook reads or writes, each with the members it needs.
	Uses map[string][]string
	// Derives maps each member a BeforeWrite hook sets to the members it derives it from (all
	// in Members). A BeforeWrite hook sets only members it declares in Members (setting another
	// fails the write as a programming error), and a member it changes is held to the rules a
	// client's value is (serverSet); a problem is named by the members it derives from, which
	// a client can change, rather than by the member the client did not send.
	Derives map[string][]string
	// BeforeWrite or AfterDelete (exactly one) is the hook and says when it runs. AfterDelete
	// makes the hook: Load calls it once for each descriptor naming the hook, with the
	// descriptors Uses names (by name, all present), and the hook it returns keeps those it
	// needs, so that no delete looks a descriptor up.
	BeforeWrite BeforeWriteHook
	AfterDelete func(uses map[string]*Resource) AfterDeleteHook
}

var registered = struct {
	sync.RWMutex
	hooks map[string]Hook
}{hooks: map[string]Hook{}}

// RegisterHook makes h available to descriptors. A malformed or repeated hook is a
// programming error: it panics, as the program could not serve its descriptors.
func RegisterHook(h Hook) {
	if !hookNameRe.MatchString(h.Name) || (h.BeforeWrite == nil) == (h.AfterDelete == nil) {
		panic(fmt.Sprintf("engine: hook %q needs a lower-case hyphenated name and exactly one of BeforeWrite and AfterDelete", h.Name))
	}
	for m, from := range h.Derives {
		if h.BeforeWrite == nil || !slices.Contains(h.Members, m) || slices.ContainsFunc(from, func(s string) bool { return !slices.Contains(h.Members, s) }) {
			panic(fmt.Sprintf("engine: hook %q derives %s from members it does not declare, or is no beforeWrite hook", h.Name, m))
		}
	}
	registered.Lock()
	defer registered.Unlock()
	if _, dup := registered.hooks[h.Name]; dup {
		panic(fmt.Sprintf("engine: hook %q registered twice", h.Name))
	}
	registered.hooks[h.Name] = h
}

// hook returns the registered hook of a phase (afterDelete or beforeWrite) by name.
func hook(name string, afterDelete bool) (Hook, bool) {
	registered.RLock()
	defer registered.RUnlock()
	h, ok := registered.hooks[name]
	if !ok || (h.AfterDelete != nil) != afterDelete {
		return Hook{}, false
	}
	return h, true
}

// hookNames lists the registered hooks of a phase, for messages.
func hookNames(afterDelete bool) string {
	registered.RLock()
	defer registered.RUnlock()
	var names []string
	for n, h := range registered.hooks {
		if (h.AfterDelete != nil) == afterDelete {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none registered"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// needs checks that r and the registry meet what h declares, naming the descriptor line of
// the hook (value) when not, and returns the descriptors h uses by name.
func (h Hook) needs(p *parsed, value string, r *Resource, g *Registry) (map[string]*Resource, error) {
	for _, m := range h.Members {
		if _, ok := r.byName[m]; !ok {
			return nil, p.errAt(value, "hook %s needs the member %s, which %s lacks", h.Name, m, r.Name)
		}
	}
	names := make([]string, 0, len(h.Uses))
	for name := range h.Uses {
		names = append(names, name)
	}
	sort.Strings(names)
	uses := make(map[string]*Resource, len(names))
	for _, name := range names {
		other, ok := g.byName[name]
		if !ok {
			return nil, p.errAt(value, "hook %s needs the descriptor %s, which is not loaded", h.Name, name)
		}
		for _, m := range h.Uses[name] {
			if _, ok := other.byName[m]; !ok {
				return nil, p.errAt(value, "hook %s needs the member %s of %s, which it lacks", h.Name, m, name)
			}
		}
		uses[name] = other
	}
	return uses, nil
}

// Set gives member of the record of r the value v; a member r lacks is ignored (a hook's
// members are checked when its descriptor loads). v must be nil or of the Go type that Record
// holds for the member's type: anything else (an int for an int member, say) would be stored,
// then answered as null and tagged unlike a get's reading, so it is a programming error that
// panics here, naming the member.
func (rec Record) Set(r *Resource, member string, v any) {
	f, ok := r.byName[member]
	if !ok {
		return
	}
	if !f.holds(v) {
		panic(fmt.Sprintf("engine: %s.%s (%s) set to a %T", r.Name, member, f.Type, v))
	}
	rec[f.Index] = v
}

// holds reports whether v is a value a Record keeps for f: nil, or f's type's Go type.
func (f *Field) holds(v any) bool {
	switch v.(type) {
	case nil:
		return true
	case string:
		return f.Type == TypeUUID || f.Type == TypeString
	case bool:
		return f.Type == TypeBool
	case int64:
		return f.Type == TypeInt
	case DateTime:
		return f.Type == TypeDateTime
	}
	return false
}

// Slugify lower-cases letters and digits and joins the words between them with hyphens.
func Slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
