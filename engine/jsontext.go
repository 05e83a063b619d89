package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// MaxJSONDepth bounds how deeply a request's JSON may nest objects and arrays; credo's bodies
// nest two or three levels, and the bound keeps a hostile body from exhausting the stack.
const MaxJSONDepth = 64

// Messages of the text rules every string of a request obeys (query values, path segments,
// JSON names and values): what credo cannot store exactly, it refuses (decisions §4).
const (
	msgNUL         = "contains U+0000 (NUL), which cannot be stored"
	msgInvalidUTF8 = "is not valid UTF-8 text"
)

// givenTwice is the problem of a member that a body (or a CSV header) names twice.
func givenTwice(name string) string { return name + " is given more than once; give it once" }

// notMember is the problem of a name in a body (or a CSV header) that is no member of r. A
// name that could be misread as written — empty, with white space at an end, or with a
// character that does not print (a control character, a format character such as U+202E) —
// is quoted, escapes and all.
func notMember(name string, r *Resource) string {
	return ShownName(name) + " is not a member of " + r.Name
}

// CheckText returns what is wrong with a request string: "" when it is valid UTF-8 without
// U+0000, else a phrase to follow the parameter or member name. A lone UTF-16 surrogate
// encoded as UTF-8 (ED A0 80) is invalid UTF-8.
func CheckText(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			return msgNUL
		}
		if c >= utf8.RuneSelf {
			if !utf8.ValidString(s[i:]) {
				return msgInvalidUTF8
			}
			for ; i < len(s); i++ {
				if s[i] == 0 {
					return msgNUL
				}
			}
			return ""
		}
	}
	return ""
}

// DecodeObject reads a request body that must be one JSON object and returns its members'
// JSON texts by name. It is the one JSON reader of request bodies, stricter than
// encoding/json in what a client could not have meant and credo could not keep:
//   - a member name given twice in any object is a problem naming it (encoding/json keeps
//     the last);
//   - every string, names included, must be valid UTF-8 without U+0000: invalid bytes, a
//     `\u0000` escape and a lone UTF-16 surrogate escape such as `\udc00` are problems naming
//     the member (encoding/json silently puts U+FFFD in their place);
//   - objects and arrays nest at most MaxJSONDepth deep.
//
// Problems are one *ValidationError, each under the member's path (`Accommodations[0].Type`);
// a syntax error is a ValidationError with a Detail.
func DecodeObject(data []byte) (map[string]json.RawMessage, error) {
	members, problems, err := DecodeObjectApart(data)
	if err != nil {
		return nil, err
	}
	if !problems.Empty() {
		return nil, problems
	}
	return members, nil
}

// DecodeObjectApart is DecodeObject returning the members and the member problems apart, for
// a reader that reports a member's problem with those of the members that did decode (drafts,
// the people import's rows, tokens/generate): a member given twice holds its first value, and
// a member whose text has a problem is present, its problem in problems under its path. err
// is a body that is not one JSON object.
func DecodeObjectApart(data []byte) (map[string]json.RawMessage, *ValidationError, error) {
	sc := jsonScanner{data: data, verr: &ValidationError{}}
	sc.skipSpace()
	if sc.pos >= len(data) || data[sc.pos] != '{' {
		if err := sc.document(""); err != nil {
			return nil, nil, err
		}
		return nil, nil, Invalid("the body must be a JSON object")
	}
	members := map[string]json.RawMessage{}
	err := sc.object("", 1, func(name string, raw []byte) bool {
		if _, dup := members[name]; dup {
			return false
		}
		members[name] = raw
		return true
	})
	if err == nil {
		err = sc.end()
	}
	if err != nil {
		return nil, nil, err
	}
	return members, sc.verr, nil
}

// CheckJSON checks that data is one JSON value obeying DecodeObject's rules at every depth;
// path names the value in problems ("" for a whole body, so that members are named alone).
func CheckJSON(data []byte, path string) error {
	sc := jsonScanner{data: data, verr: &ValidationError{}}
	if err := sc.document(path); err != nil {
		return err
	}
	if !sc.verr.Empty() {
		return sc.verr
	}
	return nil
}

// jsonScanner walks JSON text once, checking the grammar of RFC 8259 and DecodeObject's rules.
// Syntax errors stop it; member problems are collected in verr.
type jsonScanner struct {
	data []byte
	pos  int
	verr *ValidationError
}

func (s *jsonScanner) document(path string) error {
	s.skipSpace()
	if err := s.value(path, 0); err != nil {
		return err
	}
	return s.end()
}

// end checks that only white space follows the value.
func (s *jsonScanner) end() error {
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.syntax("more data after the JSON value")
	}
	return nil
}

func (s *jsonScanner) syntax(what string) error {
	if s.pos >= len(s.data) {
		return Invalid("the body is not valid JSON: it ends too early")
	}
	return Invalid("the body is not valid JSON: %s at byte %d", what, s.pos)
}

// unexpected names the byte at pos that no JSON value begins with: an ASCII character as
// itself, another byte in hex (a Latin-1 reading of 0xEF, 'ï', would name a character the
// client never sent), and a UTF-8 byte order mark, which RFC 8259 forbids a sender to add,
// as what it is.
func (s *jsonScanner) unexpected() string {
	c := s.data[s.pos]
	switch {
	case bytes.HasPrefix(s.data[s.pos:], utf8BOM):
		return "a byte order mark (EF BB BF), which JSON does not take,"
	case c >= 0x20 && c < 0x7f:
		return fmt.Sprintf("unexpected %q", c)
	}
	return fmt.Sprintf("unexpected byte 0x%02X", c)
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte order mark.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// JSONKind names the kind of the JSON value data holds ("an object", "an array", "a string",
// "a number", "true or false", "null"), for a problem saying which kind a body must be; when
// data is not one valid JSON value, err is the syntax problem a body gets (see DecodeObject).
func JSONKind(data []byte) (kind string, err error) {
	sc := jsonScanner{data: data, verr: &ValidationError{}}
	if err := sc.document(""); err != nil {
		return "", err
	}
	sc.pos = 0
	sc.skipSpace()
	switch data[sc.pos] {
	case '{':
		return "an object", nil
	case '[':
		return "an array", nil
	case '"':
		return "a string", nil
	case 't', 'f':
		return "true or false", nil
	case 'n':
		return "null", nil
	}
	return "a number", nil
}

func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value checks the value at pos, at nesting depth.
func (s *jsonScanner) value(path string, depth int) error {
	if s.pos >= len(s.data) {
		return s.syntax("")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		seen := map[string]bool{}
		return s.object(path, depth+1, func(name string, _ []byte) bool {
			if seen[name] {
				return false
			}
			seen[name] = true
			return true
		})
	case c == '[':
		return s.array(path, depth+1)
	case c == '"':
		_, problem, err := s.str()
		if err != nil {
			return err
		}
		if problem != "" {
			s.problem(path, problem)
		}
		return nil
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.syntax(s.unexpected())
}

// problem records a member problem under path (the body itself when path is "").
func (s *jsonScanner) problem(path, what string) {
	if path == "" {
		s.verr.Detail = "the body " + what
		return
	}
	s.verr.Add(path, path+" "+what)
}

func child(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// object checks the object at pos; add is called with each member's name and value text and
// reports false for a name the object already has.
func (s *jsonScanner) object(path string, depth int, add func(name string, raw []byte) bool) error {
	if depth > MaxJSONDepth {
		return s.syntax(fmt.Sprintf("objects and arrays nested more than %d deep", MaxJSONDepth))
	}
	s.pos++ // {
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.syntax("expected a member name")
		}
		name, problem, err := s.str()
		if err != nil {
			return err
		}
		shown := ShownName(name)
		if problem != "" {
			shown = Quoted(name) // quoted even where it prints: U+FFFD stands for a lone surrogate
		}
		p := child(path, shown)
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.syntax("expected ':' after a member name")
		}
		s.pos++
		s.skipSpace()
		start := s.pos
		if err := s.value(p, depth); err != nil {
			return err
		}
		switch {
		case problem != "":
			s.verr.Add(p, "the member name "+shown+" "+problem)
		case !add(name, s.data[start:s.pos]):
			s.verr.Add(p, givenTwice(p))
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.syntax("")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.skipSpace()
		case '}':
			s.pos++
			return nil
		default:
			return s.syntax("expected ',' or '}' after a member")
		}
	}
}

func (s *jsonScanner) array(path string, depth int) error {
	if depth > MaxJSONDepth {
		return s.syntax(fmt.Sprintf("objects and arrays nested more than %d deep", MaxJSONDepth))
	}
	s.pos++ // [
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := s.value(fmt.Sprintf("%s[%d]", path, i), depth); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.syntax("")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.skipSpace()
		case ']':
			s.pos++
			return nil
		default:
			return s.syntax("expected ',' or ']' after an element")
		}
	}
}

func (s *jsonScanner) literal(word string) error {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return s.syntax(s.unexpected())
	}
	s.pos += len(word)
	return nil
}

// number checks `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
func (s *jsonScanner) number() error {
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case digits() == 0:
		return s.syntax("a number without digits")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return s.syntax("a number without digits after '.'")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return s.syntax("a number without exponent digits")
		}
	}
	return nil
}

// str checks the string at pos and returns its text, and the text rule it breaks ("" when
// none: see CheckText). Escapes are checked here; text with escapes is decoded by
// encoding/json, which then has nothing left to replace.
func (s *jsonScanner) str() (text, problem string, err error) {
	start := s.pos
	s.pos++ // "
	escaped := false
	for {
		if s.pos >= len(s.data) {
			return "", "", s.syntax("")
		}
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			raw := s.data[start:s.pos]
			if !escaped {
				return string(raw[1 : len(raw)-1]), problem, nil
			}
			if err := json.Unmarshal(raw, &text); err != nil {
				return "", "", fmt.Errorf("engine: decode checked JSON string %s: %w", raw, err)
			}
			return text, problem, nil
		case c == '\\':
			escaped = true
			p, err := s.escape()
			if err != nil {
				return "", "", err
			}
			if problem == "" {
				problem = p
			}
		case c < 0x20:
			return "", "", s.syntax(fmt.Sprintf("control character %q in a string", c))
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 && problem == "" {
				problem = msgInvalidUTF8
			}
			s.pos += size
		}
	}
}

// escape checks the escape at pos (a backslash) and returns the text rule it breaks.
func (s *jsonScanner) escape() (string, error) {
	if s.pos+1 >= len(s.data) {
		s.pos = len(s.data)
		return "", s.syntax("")
	}
	switch s.data[s.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos += 2
		return "", nil
	case 'u':
	default:
		s.pos++
		return "", s.syntax(fmt.Sprintf("invalid escape '\\%c'", s.data[s.pos]))
	}
	r, err := s.hex4()
	if err != nil {
		return "", err
	}
	switch {
	case r == 0:
		return msgNUL, nil
	case r >= 0xDC00 && r < 0xE000:
		return msgInvalidUTF8, nil // a low surrogate without a high one
	case r >= 0xD800 && r < 0xDC00:
		if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
			save := s.pos
			low, err := s.hex4()
			if err != nil {
				return "", err
			}
			if low >= 0xDC00 && low < 0xE000 {
				return "", nil
			}
			s.pos = save // not the pair's second half: it is checked as an escape of its own
		}
		return msgInvalidUTF8, nil // a high surrogate without a low one
	}
	return "", nil
}

// hex4 reads `\uXXXX` at pos.
func (s *jsonScanner) hex4() (rune, error) {
	if len(s.data)-s.pos < 6 {
		s.pos = len(s.data)
		return 0, s.syntax("")
	}
	var r rune
	for _, c := range s.data[s.pos+2 : s.pos+6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, s.syntax("invalid \\u escape")
		}
	}
	s.pos += 6
	return r, nil
}
