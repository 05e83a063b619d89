package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Flag is a permission flag (decisions §6 and §7): the Allow… columns of a permission record.
type Flag string

// The permission flags, in the order of their bits.
const (
	Execute      Flag = "Execute"
	Read         Flag = "Read"
	Write        Flag = "Write"
	Create       Flag = "Create"
	Delete       Flag = "Delete"
	Administrate Flag = "Administrate"
	Configure    Flag = "Configure"
	// TrialAccess has no bit in PermissionMask (decisions §6), so no mask grants it; only
	// Administrate and operators do.
	TrialAccess Flag = "TrialAccess"
)

// Flags lists every flag, those with bits first in the order of their bits, for
// security/settings/permissions.
func Flags() []Flag {
	return []Flag{Execute, Read, Write, Create, Delete, Administrate, Configure, TrialAccess}
}

// ParseFlag returns the flag of a name ("Read"); an unknown name is an error.
func ParseFlag(name string) (Flag, error) {
	f := Flag(name)
	if f == TrialAccess || f.Bit() != 0 {
		return f, nil
	}
	return "", fmt.Errorf("auth: unknown permission flag %q", name)
}

// Bit returns the flag's bit in PermissionMask: Execute 1, Read 2, Write 4, Create 8, Delete 16,
// Administrate 32, Configure 64; 0 for TrialAccess and unknown flags.
func (f Flag) Bit() int64 {
	switch f {
	case Execute:
		return 1
	case Read:
		return 2
	case Write:
		return 4
	case Create:
		return 8
	case Delete:
		return 16
	case Administrate:
		return 32
	case Configure:
		return 64
	default:
		return 0
	}
}

// MaskOf returns the PermissionMask of a set of flags: the OR of their bits.
func MaskOf(flags ...Flag) int64 {
	var m int64
	for _, f := range flags {
		m |= f.Bit()
	}
	return m
}

// ObjectNamespace is the UUIDv5 namespace of permission objects. It is a fixed random UUID
// chosen for credo; changing it would orphan every stored permission.
var ObjectNamespace = uuid.MustParse("6d88e0d7-dd79-4fd1-a2ef-4b35c8557a9d")

// ObjectID returns the ObjectIdentifier of a permission object: the UUIDv5 (SHA-1) in
// ObjectNamespace of its path relative to the partition ("people", "progress/gradebooks").
// Leading and trailing slashes are ignored, so "/people/" names the same object.
func ObjectID(path string) uuid.UUID {
	return uuid.NewSHA1(ObjectNamespace, []byte(strings.Trim(path, "/")))
}

// Grants reads permissions. Another package implements it over the partition's database.
type Grants interface {
	// Mask returns the OR of the PermissionMask of every permission on object held by one of
	// the user's current groups in the organization (0 when there is none). Groups of the
	// user's other organizations grant nothing there: a credential acts in one organization.
	Mask(ctx context.Context, partition, userID, organizationID string, object uuid.UUID) (int64, error)
}

// MaxDecisionTTL is the longest an Authorizer keeps a caller's mask for an object, and so the
// longest a change of permissions or memberships takes to apply on a process. It is
// DecisionBound less the time a request takes, so that the documented bound holds end to end.
const MaxDecisionTTL = 4500 * time.Millisecond

// DecisionBound is the documented bound: a request sent this long after a change of
// permissions or memberships is stored is decided by the new state on every process.
const DecisionBound = 5 * time.Second

// Authorizer decides what an authenticated caller may do. Build it with its fields; the zero
// TTL means MaxDecisionTTL and a nil Clock means time.Now. It caches each (partition, user,
// object) mask for the TTL so that a request costs no permission query in the common case,
// while a change in storage applies everywhere within the TTL. Do not copy an Authorizer after
// first use; it is safe for concurrent use.
type Authorizer struct {
	Grants Grants
	// TTL is how long a mask is cached, at most MaxDecisionTTL.
	TTL time.Duration
	// Clock reads the time for the cache.
	Clock func() time.Time

	mu      sync.Mutex
	masks   map[maskKey]maskEntry
	sweepAt time.Time
}

type maskKey struct {
	partition, user, org string
	object               uuid.UUID
}

type maskEntry struct {
	mask  int64
	until time.Time
}

// Allow returns nil when p may use need on object: operators may do everything, Administrate
// grants every flag, and otherwise the flag's bit must be in the caller's mask. A refusal wraps
// ErrForbidden and names the object and the flag; a nil principal is ErrUnauthenticated.
func (a *Authorizer) Allow(ctx context.Context, p *Principal, object uuid.UUID, need Flag) error {
	ok, err := a.granted(ctx, p, func() uuid.UUID { return object }, need)
	if err != nil || ok {
		return err
	}
	return forbidden("the %s permission on %s is not granted to the caller", need, object)
}

// AllowPath is Allow on ObjectID(path) with the flag named need, naming the path in a refusal.
// An unknown flag name is an error (a bug in the route table, not the caller's fault).
func (a *Authorizer) AllowPath(ctx context.Context, p *Principal, path, need string) error {
	f, err := ParseFlag(need)
	if err != nil {
		return err
	}
	ok, err := a.granted(ctx, p, func() uuid.UUID { return ObjectID(path) }, f)
	if err != nil || ok {
		return err
	}
	return forbidden("the %s permission on %q is not granted to the caller", f, strings.Trim(path, "/"))
}

// granted reports whether p holds need on the object that object returns; it is called only
// when the answer depends on the object (not for an operator), since naming it costs a hash.
func (a *Authorizer) granted(ctx context.Context, p *Principal, object func() uuid.UUID, need Flag) (bool, error) {
	if p == nil {
		return false, unauthenticated(ReasonMissing, "no credential")
	}
	if p.Operator {
		return true, nil
	}
	mask, err := a.mask(ctx, p, object())
	if err != nil {
		return false, err
	}
	return mask&Administrate.Bit() != 0 || (need.Bit() != 0 && mask&need.Bit() != 0), nil
}

func (a *Authorizer) mask(ctx context.Context, p *Principal, object uuid.UUID) (int64, error) {
	key := maskKey{p.Partition, p.UserIdentifier, p.OrganizationIdentifier, object}
	now := a.now()
	a.mu.Lock()
	e, ok := a.masks[key]
	a.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.mask, nil
	}
	if a.Grants == nil {
		return 0, errors.New("auth: the authorizer has no Grants") // refuse, never allow
	}
	m, err := a.Grants.Mask(ctx, p.Partition, p.UserIdentifier, p.OrganizationIdentifier, object)
	if err != nil {
		return 0, fmt.Errorf("auth: read permissions on %s: %w", object, err)
	}
	ttl := a.TTL
	if ttl <= 0 || ttl > MaxDecisionTTL {
		ttl = MaxDecisionTTL
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.masks == nil {
		a.masks = map[maskKey]maskEntry{}
	}
	if !now.Before(a.sweepAt) {
		for k, e := range a.masks {
			if !now.Before(e.until) {
				delete(a.masks, k)
			}
		}
		a.sweepAt = now.Add(ttl)
	}
	a.masks[key] = maskEntry{mask: m, until: now.Add(ttl)}
	return m, nil
}

func (a *Authorizer) now() time.Time {
	if a.Clock != nil {
		return a.Clock()
	}
	return time.Now()
}

// PathAuthorizer adapts an Authorizer to callers that name objects by path and flags by name,
// as the router does: its Allow is the Authorizer's AllowPath.
type PathAuthorizer struct{ *Authorizer }

// Allow calls AllowPath.
func (a PathAuthorizer) Allow(ctx context.Context, p *Principal, path, need string) error {
	return a.AllowPath(ctx, p, path, need)
}
