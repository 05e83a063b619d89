package request

import (
	"net/http"
	"strings"

	"credo/engine"
)

// The conditional-request headers (RFC 9110 §13.1) that the record groups honour.
const (
	IfMatchHeader     = "If-Match"
	IfNoneMatchHeader = "If-None-Match"
)

// IfMatch returns the entity tags of the request's If-Match, as sent (a weak one, W/"…", is
// kept and so never matches: If-Match compares strongly), or ["*"]; nil when the request
// sends none. A value that is not "*" or a list of entity tags, or names no tag at all, is a
// 400 naming the header: a condition the server cannot read is never taken as no condition.
func IfMatch(r *http.Request) ([]string, error) { return tagsOf(r, IfMatchHeader) }

// IfNoneMatch returns the entity tags of the request's If-None-Match, as sent, or ["*"]; nil
// when the request sends none. A malformed one is a 400 naming the header.
func IfNoneMatch(r *http.Request) ([]string, error) { return tagsOf(r, IfNoneMatchHeader) }

// tagsOf reads the entity tags of a conditional header, ["*"] for "*", nil when absent.
func tagsOf(r *http.Request, header string) ([]string, error) {
	vs := r.Header.Values(header)
	if len(vs) == 0 {
		return nil, nil
	}
	star, tags, err := entityTags(header, vs)
	if err != nil {
		return nil, err
	}
	if star {
		return []string{"*"}, nil
	}
	return tags, nil
}

// NoneMatch reports whether the request's If-None-Match holds for a record whose ETag is etag:
// "*", or a tag equal to etag by the weak comparison (RFC 9110 §8.8.3.2: W/ is ignored). It is
// false when the request sends no If-None-Match, and a malformed one is a 400 naming the header.
func NoneMatch(r *http.Request, etag string) (bool, error) {
	vs := r.Header.Values(IfNoneMatchHeader)
	if len(vs) == 0 {
		return false, nil
	}
	star, tags, err := entityTags(IfNoneMatchHeader, vs)
	if err != nil || star {
		return star, err
	}
	for _, t := range tags {
		if strings.TrimPrefix(t, "W/") == etag {
			return true, nil
		}
	}
	return false, nil
}

// CheckNoneMatch refuses a malformed If-None-Match before any work is done (see NoneMatch).
func CheckNoneMatch(r *http.Request) error {
	_, err := NoneMatch(r, "")
	return err
}

// entityTags parses the field lines vs of header: "*" alone (star), or a comma list of
// entity tags (RFC 9110 §8.8.3: [W/]"…" with the characters %x21 / %x23-7E / obs-text between
// the quotes), empty list elements skipped (§5.6.1).
func entityTags(header string, vs []string) (star bool, tags []string, err error) {
	bad := func(format string, args ...any) (bool, []string, error) {
		return false, nil, engine.InvalidMember(header, header+" "+format, args...)
	}
	v := strings.Join(vs, ",")
	if strings.Trim(v, " \t") == "*" {
		return true, nil, nil
	}
	for i := 0; i < len(v); {
		switch v[i] {
		case ' ', '\t', ',':
			i++
			continue
		case '*':
			return bad(`takes "*" alone or a list of entity tags, not both`)
		}
		start := i
		if strings.HasPrefix(v[i:], "W/") {
			i += 2
		}
		if i >= len(v) || v[i] != '"' {
			return bad(`must be "*" or a comma list of quoted entity tags, such as "abc" or W/"abc"; it holds %s`, engine.Quoted(v[start:]))
		}
		end := i + 1
		for end < len(v) && v[end] != '"' {
			if c := v[end]; c < 0x21 || c == 0x7f {
				return bad("holds a character an entity tag cannot: %s", engine.Quoted(v[start:]))
			}
			end++
		}
		if end == len(v) {
			return bad("holds an entity tag without its closing quote: %s", engine.Quoted(v[start:]))
		}
		tags = append(tags, v[start:end+1])
		i = end + 1
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
		if i < len(v) && v[i] != ',' {
			return bad("must separate entity tags with commas: %s", engine.Quoted(v[start:]))
		}
	}
	if len(tags) == 0 {
		return bad("names no entity tag; send one or more, or \"*\", or leave the header out")
	}
	return false, tags, nil
}
