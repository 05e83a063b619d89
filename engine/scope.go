package engine

import "errors"

// Scope says which organizations' records a verb reads and writes: every organization
// (AllOrganizations: operators, start-up, the modules' own housekeeping) or one (Organization:
// a caller bound to its organization). Every verb takes one, so forgetting it does not
// compile; its zero value is no scope at all and every verb refuses it (ErrNoScope), so that
// an unset Scope can never silently mean "every organization".
type Scope struct {
	org string
	all bool
}

// ErrNoScope is what a verb returns when given the zero Scope: a programming error (500).
var ErrNoScope = errors.New("engine: no scope given; pass engine.AllOrganizations() or engine.Organization(id)")

// AllOrganizations is the scope of every organization's records.
func AllOrganizations() Scope { return Scope{all: true} }

// Organization is the scope of one organization's records. An empty id is the zero Scope,
// which every verb refuses.
func Organization(id string) Scope { return Scope{org: id} }

// All reports whether s is every organization.
func (s Scope) All() bool { return s.all }

// OrganizationID returns the one organization of s; ok is false for every organization and
// for the zero Scope.
func (s Scope) OrganizationID() (id string, ok bool) { return s.org, s.org != "" }

// Includes reports whether org's records are within s: any organization's (even none, "")
// for every organization, only its own for one; nothing for the zero Scope.
func (s Scope) Includes(org string) bool { return s.all || (s.org != "" && org == s.org) }

// check refuses the zero Scope.
func (s Scope) check() error {
	if !s.all && s.org == "" {
		return ErrNoScope
	}
	return nil
}

// orgFor returns the organization the verbs' SQL limits r to: "" when s is every
// organization or r is not scoped (it has no organization to compare).
func (s Scope) orgFor(r *Resource) string {
	if s.all || !r.Scoped() {
		return ""
	}
	return s.org
}

// String names s for messages and logs.
func (s Scope) String() string {
	switch {
	case s.all:
		return "every organization"
	case s.org != "":
		return "organization " + s.org
	}
	return "no scope"
}
