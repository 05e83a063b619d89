package request

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"credo/engine"
)

// MaxContinueLength caps a Continue token: the position of a page holds one value per order
// column, each at most a stored string, so a real token stays far below it.
const MaxContinueLength = 16 << 10

// minContinuationKey is the shortest key Continuation signs with (a SHA-256 output).
const minContinuationKey = sha256.Size

// continueVersion is the first byte of every token, so that the format can change.
const continueVersion byte = 1

// Continuation issues and reads the Continue tokens of list and search answers in one
// partition (api.md's X-Query-Pagination, extended by issue 16).
//
// A token is the unpadded base64url of
//
//	1 ‖ J ‖ HMAC-SHA256(Key, 1 ‖ B ‖ J)
//
// where J is the JSON of the next page's number and position (the last record's values in the
// query's order columns) and B binds the query it continues: the partition, the group, list or
// search, the caller's organization scope, every filter with its value, the sort, the
// projection (Includes/Excludes), Take and the format. A token presented with any of them
// different, or altered, fails the MAC. The position is readable (the client has seen those
// values) but not forgeable. Tokens do not expire: the position is all they hold, and the next
// page is read afresh from it, so an old token still continues its query correctly.
type Continuation struct {
	// Key signs the tokens; it is derived from the partition's signing key.
	Key       []byte
	Partition string
	Resource  *engine.Resource
	Kind      Kind
	Scope     engine.Scope
}

// token is J.
type token struct {
	Page  int
	After []any
}

// Token returns the token of the page after a page of q: page is its number, next its
// position (engine.Page.Next).
func (c Continuation) Token(q engine.Query, page int, next engine.Cursor) (string, error) {
	if len(c.Key) < minContinuationKey {
		return "", fmt.Errorf("request: no continuation key for partition %q", c.Partition)
	}
	j, err := json.Marshal(token{Page: page, After: next})
	if err != nil {
		return "", fmt.Errorf("request: continuation of %s: %w", c.Resource.Name, err)
	}
	b := make([]byte, 0, 1+len(j)+sha256.Size)
	b = append(append(append(b, continueVersion), j...), c.mac(q, j)...)
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Read checks a Continue token against q and returns the page number and position it
// continues from. A token that is malformed, altered, or issued for another query is a
// *engine.ValidationError naming Continue.
func (c Continuation) Read(q engine.Query, tok string) (int, engine.Cursor, error) {
	if len(c.Key) < minContinuationKey {
		return 0, nil, fmt.Errorf("request: no continuation key for partition %q", c.Partition)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok) // Strict: one text per token
	if err != nil || len(b) < 1+sha256.Size+2 || b[0] != continueVersion {
		return 0, nil, engine.InvalidMember("Continue", "Continue is not a continuation token of this server; use the Continuation member of an X-Query-Pagination header as it came")
	}
	j, sum := b[1:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if !hmac.Equal(sum, c.mac(q, j)) {
		return 0, nil, engine.InvalidMember("Continue",
			"Continue does not continue this query: it was issued for another query (filters, Sort, Take, Includes, Excludes, Format, organization or partition) or altered; send the query that gave it unchanged with Continue, or start again without Continue")
	}
	var t token
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil || t.Page < 2 {
		return 0, nil, fmt.Errorf("request: a signed continuation of %s does not decode: %v", c.Resource.Name, err)
	}
	after, err := c.Resource.CursorOf(q.Sort, t.After)
	if err != nil {
		// Signed by this partition's key for this very query, yet not fitting its order: the
		// group's descriptor changed since the token was issued.
		return 0, nil, engine.InvalidMember("Continue", "Continue names a position that %s's order no longer has (%v); start again without Continue", c.Resource.Name, err)
	}
	return t.Page, after, nil
}

// mac returns HMAC-SHA256(Key, version ‖ B ‖ j), every part of B length-prefixed. B is built
// in one buffer and hashed in one write: a write per part was 2% of a list's CPU.
func (c Continuation) mac(q engine.Query, j []byte) []byte {
	b := make([]byte, 0, 256+len(j))
	b = append(b, continueVersion)
	b = appendField(b, c.Partition)
	b = appendField(b, c.Resource.Name)
	b = appendField(b, strconv.Itoa(int(c.Kind)))
	if id, ok := c.Scope.OrganizationID(); ok {
		b = appendField(b, "organization "+id)
	} else {
		b = appendField(b, "every organization")
	}
	b = appendField(b, strconv.Itoa(len(q.Conds)))
	for _, cond := range q.Conds {
		b = appendField(b, cond.Field.Name)
		b = appendField(b, string(cond.Op))
		b = appendField(b, fmt.Sprintf("%T %v", cond.Value, cond.Value))
	}
	b = appendField(b, strconv.Itoa(len(q.Sort)))
	for _, t := range q.Sort {
		b = appendField(b, t.Field.Name)
		b = appendField(b, strconv.FormatBool(t.Desc))
	}
	b = appendField(b, strconv.Itoa(len(q.Fields)))
	for _, f := range q.Fields {
		b = appendField(b, f.Name)
	}
	b = appendField(b, strconv.Itoa(q.Take))
	b = appendField(b, string(q.Format))
	b = appendField(b, string(j))
	m := hmac.New(sha256.New, c.Key)
	m.Write(b)
	return m.Sum(nil)
}

// appendField appends s to b with its length before it (a uvarint).
func appendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// TakeContinue removes the Continue parameter from values and returns it ("" when absent),
// so that the rest reads as the query it continues. Continue given twice, empty, overlong,
// or with Page (the token names the page) is a *engine.ValidationError naming Continue.
func TakeContinue(values url.Values) (string, error) {
	vals, ok := values["Continue"]
	if !ok {
		return "", nil
	}
	delete(values, "Continue")
	switch {
	case len(vals) != 1:
		return "", engine.InvalidMember("Continue", "Continue is given %d times; give it once", len(vals))
	case vals[0] == "":
		return "", engine.InvalidMember("Continue", "Continue is empty; send the Continuation of the previous page, or leave Continue out for the first page")
	case len(vals[0]) > MaxContinueLength:
		return "", engine.InvalidMember("Continue", "Continue is longer than %d characters; no token of this server is", MaxContinueLength)
	case values.Has("Page") || values.Has("Filter.Page"):
		return "", engine.InvalidMember("Continue", "Continue names its page; send it without Page")
	}
	return vals[0], nil
}
