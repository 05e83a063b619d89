package engine

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrPrecondition: a conditional write's If-Match names none of the record's current ETags.
var ErrPrecondition = errors.New("the record changed since the given ETag")

// ErrNoneMatch: a conditional write's If-None-Match names the record's current ETag, or is "*"
// and the record exists. It is an ErrPrecondition.
var ErrNoneMatch = fmt.Errorf("the record has an ETag that If-None-Match names: %w", ErrPrecondition)

// ETag returns the record's strong validator: the SHA-256 of its canonical JSON encoding over
// r.Output (the full record, whatever projection a get asked for), base64url, quoted.
func (r *Resource) ETag(rec Record) string { return ETagOfJSON(AppendJSON(nil, rec, r.Output)) }

// ETagOfJSON returns the ETag of a record whose AppendJSON encoding over its resource's
// Output is b: for a caller that encodes the full record anyway, so that it is encoded once.
func ETagOfJSON(b []byte) string {
	sum := sha256.Sum256(b)
	var out [2 + 43]byte // quotes around base64url of 32 bytes, unpadded
	out[0], out[len(out)-1] = '"', '"'
	base64.RawURLEncoding.Encode(out[1:len(out)-1], sum[:])
	return string(out[:])
}

// Condition is a write's preconditions (If-Match, If-None-Match) and, once the write is done,
// the written record's ETag. Attached with WithCondition, it applies to one resource only.
type Condition struct {
	// IfMatch lists the ETags the record must have; "*" matches any existing record; empty
	// means unconditional.
	IfMatch []string
	// IfNoneMatch lists ETags the record must not have, compared weakly (a W/ prefix is
	// ignored); "*" refuses any existing record (RFC 9110 §13.1.2); empty means no such
	// condition.
	IfNoneMatch []string
	// ETag is set by Update and Patch to the record's ETag after the write.
	ETag string
}

type condKey struct{ r *Resource }

// WithCondition returns a context whose updates, patches and deletes of r check c.IfMatch and
// c.IfNoneMatch inside their transaction, on the locked row, and report the new ETag in c.ETag.
func WithCondition(ctx context.Context, r *Resource, c *Condition) context.Context {
	return context.WithValue(ctx, condKey{r}, c)
}

func conditionOf(ctx context.Context, r *Resource) *Condition {
	c, _ := ctx.Value(condKey{r}).(*Condition)
	return c
}

// precondition checks c against the current record with key; s is bound to the write's
// transaction and the row is already locked. locked is the record as getForUpdate read it (its
// stored fields), nil when none was read: where it holds the full record (no computed output
// member), the check needs no second read.
func (s *Store) precondition(ctx context.Context, r *Resource, key []any, org string, c *Condition, locked Record) error {
	if c == nil || len(c.IfMatch) == 0 && len(c.IfNoneMatch) == 0 {
		return nil
	}
	if len(c.IfNoneMatch) == 0 && slices.Contains(c.IfMatch, "*") {
		return nil
	}
	cur := locked
	if cur == nil || !r.storedOutput {
		var err error
		if cur, err = s.get(ctx, r, key, r.Output, org); err != nil {
			return err
		}
	}
	tag := r.ETag(cur)
	if len(c.IfMatch) > 0 && !slices.Contains(c.IfMatch, "*") && !slices.Contains(c.IfMatch, tag) {
		return ErrPrecondition
	}
	for _, t := range c.IfNoneMatch {
		if t == "*" || strings.TrimPrefix(t, "W/") == tag {
			return ErrNoneMatch
		}
	}
	return nil
}

// tag records in c the ETag of the record with key as the write left it: written, the record
// the write stored, which is the full record unless r has computed output members, read back
// then.
func (s *Store) tag(ctx context.Context, r *Resource, key []any, org string, c *Condition, written Record) error {
	if c == nil {
		return nil
	}
	cur := written
	if !r.storedOutput {
		var err error
		if cur, err = s.get(ctx, r, key, r.Output, org); err != nil {
			return err
		}
	}
	c.ETag = r.ETag(cur)
	return nil
}
