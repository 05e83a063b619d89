package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"credo/engine/backend"
)

// Record holds one record's values indexed by Field.Index: nil (null), string (uuid, string),
// bool, int64 (int) or DateTime. Members outside a query's projection are nil.
type Record []any

// Get returns the value of a member by name.
func (rec Record) Get(r *Resource, name string) any {
	f, ok := r.byName[name]
	if !ok {
		return nil
	}
	return rec[f.Index]
}

// NewRecord returns an empty record of r.
func (r *Resource) NewRecord() Record { return make(Record, len(r.Members)) }

// validator returns the one shared validator: descriptors name its tags in `validate`. A
// program that loads a descriptor with a validate tag links it (checkValidateTag).
func validator() backend.Validator { return backend.LinkedValidator() }

func checkValidateTag(tag string) (err error) {
	v := validator()
	if v == nil {
		return fmt.Errorf("this program links no validator of validate tags: it must import _ %q", "credo/engine/validator")
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	_ = v.Var("", tag)
	return nil
}

// ParseUUID accepts a UUID in canonical form (any case) and returns it lower-case. A UUID
// already lower-case, as nearly every client sends it, is returned as it is, without formatting
// a copy (an allocation of every get, update and delete by key).
func ParseUUID(s string) (string, error) {
	if len(s) != 36 {
		return "", fmt.Errorf("%s is not a UUID", Quoted(s))
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%s is not a UUID", Quoted(s))
	}
	if !hasUpperHex(s) {
		return s, nil
	}
	return u.String(), nil
}

// hasUpperHex reports whether s holds one of the letters A to F.
func hasUpperHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; c >= 'A' && c <= 'F' {
			return true
		}
	}
	return false
}

// NewID returns a new time-ordered UUID (version 7) for a record key.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// ParseText converts a query-string value (or a CSV cell) into the field's type. A string must
// be valid UTF-8 without U+0000 (CheckText) and at most the field's maximum length.
func (f *Field) ParseText(s string) (any, error) {
	switch f.Type {
	case TypeUUID:
		return ParseUUID(s)
	case TypeString:
		if p := f.valueProblem(s); p != "" {
			return nil, errors.New(p)
		}
		return s, nil
	case TypeBool:
		switch strings.ToLower(s) {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%s is not a boolean (true or false)", Quoted(s))
	case TypeInt:
		n, ok := ParseInteger(s)
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("%s is not a 32-bit integer", Quoted(s))
		}
		return n, nil
	case TypeDateTime:
		d, err := ParseDateTime(s)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, fmt.Errorf("engine: field %s has unknown type %s", f.Name, f.Type)
}

// valueProblem returns what is wrong with v, a value of f's Go type, as a value of the member:
// "" when nothing, else a phrase to follow the member's name. A string obeys the text rules
// (CheckText) and is at most MaxLen characters long; an int fits in 32 bits, as a column of
// the member holds it. It is the one statement of these rules for a value: a query's or a
// CSV cell's (ParseText) and every written member's (complete), whatever built the draft
// (a body, a file, Draft.Set, a module) and SetMatching's. It allocates nothing but the
// problem's text.
func (f *Field) valueProblem(v any) string {
	switch v := v.(type) {
	case string:
		if f.Type != TypeString {
			return ""
		}
		if p := CheckText(v); p != "" {
			return p
		}
		if f.MaxLen > 0 && len(v) > f.MaxLen {
			if n := utf8.RuneCountInString(v); n > f.MaxLen {
				return fmt.Sprintf("is %d characters long; the maximum is %d", n, f.MaxLen)
			}
		}
	case int64:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return fmt.Sprintf("is %d, outside the 32-bit integers", v)
		}
	}
	return ""
}

// parseJSON converts one JSON member into the field's type; null is nil.
func (f *Field) parseJSON(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	switch f.Type {
	case TypeUUID, TypeString, TypeDateTime:
		s, ok := plainJSONString(raw)
		if !ok {
			if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
				if f.Type == TypeString {
					return nil, errors.New("must be a string")
				}
				return nil, fmt.Errorf("must be a %s string", f.Type)
			}
		}
		if f.Type == TypeString {
			return s, nil // its text rules and length are complete's to check, as for every write
		}
		return f.ParseText(s)
	case TypeBool:
		switch string(raw) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("must be true or false")
		}
		return b, nil
	case TypeInt:
		return JSONInt(raw)
	}
	return nil, fmt.Errorf("engine: field %s has unknown type %s", f.Name, f.Type)
}

// JSONInt reads a JSON number that is a whole 32-bit integer, written as one: a quoted number
// ("7"), a fraction (7.0) or an exponent (7e0) is refused, as JSON's types are exact.
func JSONInt(raw json.RawMessage) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, fmt.Errorf("must be an integer")
	}
	v, ok := ParseInteger(string(raw))
	if !ok || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, fmt.Errorf("must be a 32-bit integer")
	}
	return v, nil
}

// ParseInteger reads s as JSON writes an integer, -?(0|[1-9][0-9]*), that fits in 64 bits: no
// plus sign, no leading zero, no space, no fraction or exponent, ASCII digits only (-0 is
// JSON's, and reads as 0). It is the one reader of an integer a client writes, in a body
// (JSONInt), a query value (Page, Take, an int filter: ParseText), a path key or a CSV cell,
// so that an integer is written alike everywhere: 5, never +5 or 05. A caller checks the
// range it needs, which is where a minus is refused (Page=-1).
func ParseInteger(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] == '0' && len(digits) > 1 {
		return 0, false
	}
	for i := range len(digits) {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// plainJSONString returns the text of a JSON string without escapes, which most member values
// are, without a pass through encoding/json. raw has already been checked to be valid JSON.
func plainJSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return "", false // escapes, or invalid UTF-8 that encoding/json replaces
	}
	return string(body), true
}

// defaultValue returns the value an omitted member takes (see FieldSpec.Default).
func defaultValue(f *Field) (any, error) {
	switch {
	case f.Default == "now" && f.Type == TypeDateTime:
		return Now(), nil
	case f.Default == "new" && f.Type == TypeUUID:
		return NewID(), nil
	case f.Default != "":
		return f.ParseText(f.Default)
	case f.Nullable:
		return nil, nil
	}
	return zeroValue(f.Type), nil
}

// zeroValue is what an omitted non-nullable member without a default stores, as the original
// platform's .NET deserializer did: "", false, 0, the nil UUID, 0001-01-01T00:00:00+00:00.
func zeroValue(t Type) any {
	switch t {
	case TypeString:
		return ""
	case TypeBool:
		return false
	case TypeInt:
		return int64(0)
	case TypeUUID:
		return NilUUID
	case TypeDateTime:
		return zeroDateTime
	}
	return nil
}

var zeroDateTime, _ = ParseDateTime("0001-01-01T00:00:00Z")

// NilUUID is the UUID of all zeros, the zero value of a uuid member, and a typed client's unset
// Guid: refused where a client would name a new record by it (creates, people import, version 1;
// credo load keeps the keys its files give).
const NilUUID = "00000000-0000-0000-0000-000000000000"

// complete fills members the body omitted and adds to verr the problems of the present ones
// (writeProblem): nulls, requirements (a required uuid member may not be the nil UUID), the
// value rules of each member the write gives (valueProblem: text, length, range) and validate
// tags. Members
// present but not given (a patch's stored values) are not held to the value rules: a record
// stored before a descriptor lowered a maxLength stays patchable in its other members. A
// read-only member is never required: an API body cannot give it (DecodeDraft drops it), so
// it takes its default, null or zero value until a hook or the write check sets it; a file
// (DecodeFileDraft) or a stored record (a patch) gives it, and it is checked like any member.
// A member that did not decode (failed) has its problem already: it is neither checked nor
// missing. Its error is a default that does not parse (a descriptor's bug).
func (r *Resource) complete(rec Record, present, given, failed []bool, verr *ValidationError) error {
	for _, f := range r.Fields {
		if failed != nil && failed[f.Index] {
			continue
		}
		if !present[f.Index] {
			if f.Required && !f.ReadOnly {
				verr.Add(f.Name, f.Name+" is required")
				continue
			}
			v, err := defaultValue(f)
			if err != nil {
				return fmt.Errorf("engine: default of %s.%s: %w", r.Name, f.Name, err)
			}
			rec[f.Index] = v
			continue
		}
		if p := f.writeProblem(rec[f.Index], given[f.Index]); p != "" {
			verr.Add(f.Name, f.Name+" "+p)
		}
	}
	return nil
}

// writeProblem returns what is wrong with v as the value a write stores for f: "" when
// nothing, else a phrase to follow the member's name. A null needs a nullable member, a
// required uuid member may not be the nil UUID, a value the write gives (given: not a stored
// value a patch keeps) obeys the value rules (valueProblem), and a non-null value satisfies
// the member's validate tag. complete holds every present member to it, and serverSet
// every member a beforeWrite hook or a write check changed, so that the server's values obey
// the rules a client's do.
func (f *Field) writeProblem(v any, given bool) string {
	if v == nil {
		if !f.Nullable {
			return "cannot be null"
		}
		return ""
	}
	if f.Required && f.Type == TypeUUID && v == NilUUID {
		// A required reference given as the nil UUID refers to nothing: a client that
		// sends it has almost always left a typed member unset (decisions §4).
		return "is required and cannot be the nil UUID " + NilUUID
	}
	if given {
		if p := f.valueProblem(v); p != "" {
			return p
		}
	}
	if f.Validate != "" {
		if err := validator().Var(v, f.Validate); err != nil {
			return fmt.Sprintf("does not satisfy %q", f.Validate)
		}
	}
	return ""
}
