package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"credo/engine"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// MaxBodyBytes caps every version-1 request body, the partner callback's included (decisions §3).
const MaxBodyBytes = request.MaxBodyBytes

// members is a JSON object body by member name. Names are matched exactly (encoding/json would
// accept any case), and every value is converted by the getter of its type, which names the
// member when the JSON type is wrong.
type members struct {
	prefix string
	m      map[string]json.RawMessage
}

// readBody reads a JSON object whose members are among allowed, through the one body reader
// (request.Object: 415 for another Content-Type, 413 over MaxBodyBytes, a repeated member,
// invalid UTF-8 or U+0000 a 400 naming the member). An empty body is an empty object: api.md
// marks every member of every v1 body optional, and the rules say which are needed.
func readBody(w http.ResponseWriter, r *http.Request, allowed ...string) (members, error) {
	m, err := request.Object(w, r, MaxBodyBytes)
	if err != nil {
		var verr *engine.ValidationError
		if errors.As(err, &verr) && len(verr.Fields) == 0 && verr.Detail != "" {
			// The reader's own words ("the body is not valid JSON: it ends too early", "the
			// body must be a JSON object"), as a version-1 message: capitalized, with a period.
			return members{}, invalidBody(strings.ToUpper(verr.Detail[:1])+verr.Detail[1:]+".", "")
		}
		return members{}, err
	}
	return checkMembers(m, "", allowed)
}

// readString reads a body whose one member, name, is a string; absent and null are nil.
func readString(w http.ResponseWriter, r *http.Request, name string) (*string, error) {
	b, err := readBody(w, r, name)
	if err != nil {
		return nil, err
	}
	return b.str(name)
}

// parseObject reads an object nested in a body that readBody has checked.
func parseObject(data []byte, prefix string, allowed []string) (members, error) {
	m, err := engine.DecodeObject(data)
	if err != nil {
		return members{}, invalidBody(fmt.Sprintf("%s must be a JSON object.", strings.TrimSuffix(prefix, ".")), prefix)
	}
	return checkMembers(m, prefix, allowed)
}

// checkMembers refuses members that are not among allowed: one 400 whose Detail names each,
// sorted as v2 names a body's unknown members (its Detail joins their messages in Errors'
// order), and whose Errors has each with the members the operation takes. Past
// problem.MaxMembers the Detail names the first ones, and problem.From counts the rest.
func checkMembers(m map[string]json.RawMessage, prefix string, allowed []string) (members, error) {
	var unknown []string
	for name := range m {
		if !slices.Contains(allowed, name) {
			unknown = append(unknown, prefix+engine.ShownName(name))
		}
	}
	if len(unknown) == 0 {
		return members{prefix: prefix, m: m}, nil
	}
	slices.Sort(unknown)
	verr := &engine.ValidationError{}
	for _, shown := range unknown {
		verr.Add(shown, fmt.Sprintf("%s is not a member; the members are %s", shown, strings.Join(allowed, ", ")))
	}
	verr.Detail = fmt.Sprintf("The body has members that the operation does not take: %s.", strings.Join(unknown[:min(len(unknown), problem.MaxMembers)], ", "))
	return members{}, verr
}

// problems gathers a body's problems that need no database, so that one 400 names them all.
type problems []error

func (p *problems) add(err error) {
	if err != nil {
		*p = append(*p, err)
	}
}

// err is nil without problems and the one problem as it is; several are one 400 whose Detail
// joins theirs with "; " (each message in the words it has alone; past problem.MaxMembers, a
// count of the rest) and whose Errors holds every member they name (bounded as every 400's). A
// problem that is not a 400 is returned alone.
func (p problems) err() error {
	switch len(p) {
	case 0:
		return nil
	case 1:
		return p[0]
	}
	var details []string
	out := &engine.ValidationError{}
	for i, err := range p {
		q := problem.From(err)
		if q.Status != http.StatusBadRequest {
			return err
		}
		if i < problem.MaxMembers {
			details = append(details, q.Detail)
		}
		for m, why := range q.Errors {
			for _, w := range why {
				out.Add(m, w)
			}
		}
	}
	if n := len(p) - len(details); n > 0 {
		details = append(details, fmt.Sprintf("and %d more problems", n))
	}
	out.Detail = strings.Join(details, "; ")
	return out
}

func invalidBody(detail, prefix string) error {
	verr := &engine.ValidationError{Detail: detail}
	if prefix != "" {
		verr.Add(strings.TrimSuffix(prefix, "."), detail)
	}
	return verr
}

func (b members) wrongType(name, want string) error {
	n := b.prefix + name
	return engine.InvalidMember(n, "%s must be %s", n, want)
}

// str returns a string member; absent and null are nil.
func (b members) str(name string) (*string, error) {
	raw, ok := b.m[name]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var s string
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return nil, b.wrongType(name, "a string")
	}
	return &s, nil
}

// strMember is a string member to read and where its value goes.
type strMember struct {
	name string
	dst  **string
}

// strs reads string members (absent and null are nil), adding each one's problem to p.
func (b members) strs(p *problems, ms ...strMember) {
	for _, m := range ms {
		v, err := b.str(m.name)
		p.add(err)
		*m.dst = v
	}
}

// filter returns a string member that filters on field f: it must pass f.ParseText (valid
// UTF-8 without U+0000, at most f's maximum length); absent and null are nil.
func (b members) filter(name string, f *engine.Field) (*string, error) {
	s, err := b.str(name)
	if err != nil || s == nil {
		return s, err
	}
	if _, err := f.ParseText(*s); err != nil {
		n := b.prefix + name
		return nil, engine.InvalidMember(n, "%s %v", n, err)
	}
	return s, nil
}

// int returns a 32-bit integer member as int64; absent and null are nil.
func (b members) int(name string) (*int64, error) {
	raw, ok := b.m[name]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	v, err := engine.JSONInt(raw)
	if err != nil {
		return nil, b.wrongType(name, "a 32-bit integer")
	}
	return &v, nil
}

// datetime returns a datetime member in the send format; absent and null are nil.
func (b members) datetime(name string) (*engine.DateTime, error) {
	s, err := b.str(name)
	if err != nil || s == nil {
		return nil, err
	}
	d, err := engine.ParseDateTime(*s)
	if err != nil {
		return nil, engine.InvalidMember(b.prefix+name, "%s: %v", b.prefix+name, err)
	}
	return &d, nil
}

// accommodation is one element of Accommodations, and the body of grant-accommodation.
type accommodation struct {
	Type          string  `json:"Type"`
	Name          *string `json:"Name"`
	TimeExtension *int64  `json:"TimeExtension"`
}

var accommodationMembers = []string{"Type", "Name", "TimeExtension"}

// accommodation reads an Accommodation from b. A blank Type or a negative TimeExtension is a
// v1 problem; the Type is kept without surrounding spaces. Every problem is reported, and a
// member of the wrong type is not also reported blank or negative.
func (b members) accommodation() (accommodation, error) {
	var p problems
	typ, typErr := b.str("Type")
	p.add(typErr)
	name, err := b.str("Name")
	p.add(err)
	ext, extErr := b.int("TimeExtension")
	p.add(extErr)
	if typErr == nil && (typ == nil || strings.TrimSpace(*typ) == "") {
		p.add(failMember(msgAccommodationType, b.prefix+"Type", "Type is required and cannot be blank"))
	}
	if extErr == nil && ext != nil && *ext < 0 {
		p.add(failMember(msgExtensionInvalid, b.prefix+"TimeExtension", "TimeExtension cannot be negative"))
	}
	if err := p.err(); err != nil {
		return accommodation{}, err
	}
	return accommodation{Type: strings.TrimSpace(*typ), Name: name, TimeExtension: ext}, nil
}

// accommodations reads an array of Accommodation, reporting the problems of every element; a
// Type given twice keeps the last element, as granting both one after the other would.
func (b members) accommodations(name string) ([]accommodation, error) {
	raw, ok := b.m[name]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, b.wrongType(name, "an array of Accommodation objects")
	}
	var out []accommodation
	var p problems
	for i, e := range elems {
		m, err := parseObject(e, fmt.Sprintf("%s%s[%d].", b.prefix, name, i), accommodationMembers)
		if err != nil {
			p.add(err)
			continue
		}
		acc, err := m.accommodation()
		if err != nil {
			p.add(err)
			continue
		}
		out = slices.DeleteFunc(out, func(o accommodation) bool { return o.Type == acc.Type })
		out = append(out, acc)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// queryParams reads a request's query (request.Query: a malformed query string is a 400 naming
// the parameter) and checks that it has only the allowed parameters, each once.
func queryParams(r *http.Request, allowed ...string) (url.Values, error) {
	q, err := request.Query(r)
	if err != nil {
		return nil, err
	}
	verr := &engine.ValidationError{}
	for name, vals := range q {
		switch {
		case !slices.Contains(allowed, name):
			shown := engine.ShownName(name)
			verr.Add(shown, fmt.Sprintf("unknown parameter %s; the parameters are %s", shown, strings.Join(allowed, ", ")))
		case len(vals) != 1:
			verr.Add(name, fmt.Sprintf("%s is given %d times; give it once", name, len(vals)))
		}
	}
	if !verr.Empty() {
		return nil, verr
	}
	return q, nil
}

// requiredParam returns a query parameter that must be given.
func requiredParam(q url.Values, name string) (string, error) {
	v := q.Get(name)
	if strings.TrimSpace(v) == "" {
		return "", engine.InvalidMember(name, "the query parameter %s is required", name)
	}
	return v, nil
}
