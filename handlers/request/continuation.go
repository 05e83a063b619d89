package request

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"sync"

	"credo/auth"
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
	j, err := appendToken(make([]byte, 0, 128), page, next)
	if err != nil {
		return "", fmt.Errorf("request: continuation of %s: %w", c.Resource.Name, err)
	}
	m := c.signer()
	defer m.release()
	var sum [sha256.Size]byte
	copy(sum[:], m.sum(c, q, j))
	m.buf = append(append(append(m.buf[:0], continueVersion), j...), sum[:]...)
	b := make([]byte, 0, base64.RawURLEncoding.EncodedLen(len(m.buf)))
	return string(base64.RawURLEncoding.AppendEncode(b, m.buf)), nil
}

// appendToken appends J, the JSON of token{page, after}, as encoding/json writes it: plain
// values by hand, anything else (a string json would escape, a type not listed) through
// json.Marshal, so that a token's bytes do not depend on which path wrote them.
func appendToken(b []byte, page int, after engine.Cursor) ([]byte, error) {
	start := len(b)
	b = append(b, `{"Page":`...)
	b = strconv.AppendInt(b, int64(page), 10)
	b = append(b, `,"After":`...)
	if after == nil {
		return append(b, "null}"...), nil
	}
	b = append(b, '[')
	for i, v := range after {
		if i > 0 {
			b = append(b, ',')
		}
		switch x := v.(type) {
		case nil:
			b = append(b, "null"...)
		case bool:
			b = strconv.AppendBool(b, x)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case string:
			if !plainJSON(x) {
				return appendMarshalled(b[:start], page, after)
			}
			b = append(append(append(b, '"'), x...), '"')
		default:
			return appendMarshalled(b[:start], page, after)
		}
	}
	return append(b, "]}"...), nil
}

func appendMarshalled(b []byte, page int, after engine.Cursor) ([]byte, error) {
	j, err := json.Marshal(token{Page: page, After: after})
	return append(b, j...), err
}

// plainJSON reports whether encoding/json writes s as it is between quotes: printable ASCII
// without the quote, the backslash and the characters it escapes for HTML (<, >, &).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// Read checks a Continue token against q and returns the page number and position it
// continues from. A token that is malformed, altered, or issued for another query is a
// *engine.ValidationError naming Continue.
func (c Continuation) Read(q engine.Query, tok string) (int, engine.Cursor, error) {
	if len(c.Key) < minContinuationKey {
		return 0, nil, fmt.Errorf("request: no continuation key for partition %q", c.Partition)
	}
	b, err := auth.DecodeToken(tok) // one text per token
	if err != nil || len(b) < 1+sha256.Size+2 || b[0] != continueVersion {
		return 0, nil, engine.InvalidMember("Continue", "Continue is not a continuation token of this server; use the Continuation member of an X-Query-Pagination header as it came")
	}
	j, sum := b[1:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	m := c.signer()
	ok := hmac.Equal(sum, m.sum(c, q, j))
	m.release()
	if !ok {
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

// signer is an HMAC-SHA256 state for one key, ready to write, and the buffer its input is
// built in. hmac.New derives the key's pads into two new digests, which was most of the cost of
// a token; signers are pooled per key instead (see signers).
type signer struct {
	mac  hash.Hash
	buf  []byte
	pool *sync.Pool
}

// signers holds a pool of signers per continuation key (one per partition); a key is at most
// a few dozen bytes and partitions are few, so the map stays small.
var signers struct {
	sync.RWMutex
	pools map[string]*sync.Pool
}

// signer returns a signer for c's key from its pool.
func (c Continuation) signer() *signer {
	signers.RLock()
	p := signers.pools[string(c.Key)]
	signers.RUnlock()
	if p == nil {
		key := bytes.Clone(c.Key)
		signers.Lock()
		if p = signers.pools[string(key)]; p == nil {
			p = &sync.Pool{}
			p.New = func() any { return &signer{mac: hmac.New(sha256.New, key), pool: p} }
			if signers.pools == nil {
				signers.pools = map[string]*sync.Pool{}
			}
			signers.pools[string(key)] = p
		}
		signers.Unlock()
	}
	return p.Get().(*signer)
}

func (m *signer) release() {
	if cap(m.buf) <= MaxContinueLength {
		m.pool.Put(m)
	}
}

// sum returns HMAC-SHA256(Key, version ‖ B ‖ j), every part of B length-prefixed. B is built
// in one buffer and hashed in one write: a write per part was 2% of a list's CPU. The sum is
// valid until the signer's next use.
func (m *signer) sum(c Continuation, q engine.Query, j []byte) []byte {
	b := m.buf[:0]
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
		b = appendValue(b, cond.Value)
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
	b = binary.AppendUvarint(b, uint64(len(j)))
	b = append(b, j...)
	m.buf = b
	m.mac.Reset()
	m.mac.Write(b)
	return m.mac.Sum(b[len(b):])
}

// appendValue appends a filter's value as the field fmt.Sprintf("%T %v", v, v) would give:
// strings without fmt, the rest through it.
func appendValue(b []byte, v any) []byte {
	if s, ok := v.(string); ok {
		b = binary.AppendUvarint(b, uint64(len("string ")+len(s)))
		return append(append(b, "string "...), s...)
	}
	return appendField(b, fmt.Sprintf("%T %v", v, v))
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
