package request

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"credo/engine"
)

// Kind says which operation a query string is for, and so which projection it starts from.
type Kind int

// Query kinds: count takes no paging, list projects the record, search the reduced record.
const (
	KindCount Kind = iota
	KindList
	KindSearch
)

// originParams are the Origin.* parameters every count, list and search accepts (api.md rule 4),
// typed as fields so that they are checked like filters.
var originParams = func() map[string]*engine.Field {
	m := map[string]*engine.Field{}
	for name, t := range map[string]engine.Type{
		"Origin.When": engine.TypeDateTime, "Origin.Organization": engine.TypeUUID, "Origin.User": engine.TypeUUID,
		"Origin.Proxy": engine.TypeUUID, "Origin.Description": engine.TypeString, "Origin.Reason": engine.TypeString,
		"Origin.Source": engine.TypeString,
	} {
		m[name] = &engine.Field{Name: name, Type: t, MaxLen: engine.MaxStringLength}
	}
	return m
}()

var pagingParams = []string{"Page", "Take", "Sort", "Excludes", "Includes", "Format"}

// ListQuery reads the query parameters of a count, list or search of r into the engine's
// typed query. Unknown parameters, values of the wrong type and out-of-range paging are
// *engine.ValidationErrors naming the parameter.
func ListQuery(r *engine.Resource, values url.Values, kind Kind) (engine.Query, error) {
	q := engine.Query{Page: 1, Take: engine.DefaultTake, Format: engine.FormatJSON}
	verr := &engine.ValidationError{}
	paging := map[string]string{}
	// aliased holds the paging parameters given only as Filter.*: their problems name the
	// parameter as sent (Filter.Format=xml is a problem of Filter.Format, not of Format).
	aliased := map[string]bool{}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, raw := range names {
		vals := values[raw]
		name := engine.ShownName(raw) // as problems name it: the raw name when it is one of ours
		if len(vals) != 1 {
			verr.Add(name, fmt.Sprintf("%s is given %d times; give it once", name, len(vals)))
			continue
		}
		v := vals[0]
		switch {
		case raw == "Identifier":
			id, err := r.Key[0].ParseText(v)
			if err != nil {
				verr.Add(name, fmt.Sprintf("Identifier: %v", err))
				continue
			}
			q.Conds = append(q.Conds, engine.Cond{Field: r.Key[0], Op: engine.MatchEq, Value: id})
		case strings.HasPrefix(raw, "Origin."):
			f, ok := originParams[raw]
			if !ok {
				verr.Add(name, fmt.Sprintf("unknown parameter %s (Origin.When, Origin.Organization, Origin.User, Origin.Proxy, Origin.Description, Origin.Reason, Origin.Source)", name))
				continue
			}
			if _, err := f.ParseText(v); err != nil {
				verr.Add(name, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			if q.Origin == nil {
				q.Origin = map[string]string{}
			}
			q.Origin[raw] = v
		case strings.HasPrefix(raw, "Filter."):
			p := strings.TrimPrefix(raw, "Filter.")
			if !slices.Contains(pagingParams, p) {
				verr.Add(name, fmt.Sprintf("unknown parameter %s (Filter.%s)", name, strings.Join(pagingParams, ", Filter.")))
				continue
			}
			if prev, dup := paging[p]; dup && prev != v {
				verr.Add(name, fmt.Sprintf("%s and %s disagree", name, p))
				continue
			}
			if _, given := paging[p]; !given {
				aliased[p] = true
			}
			paging[p] = v
		case slices.Contains(pagingParams, raw):
			if kind == KindCount {
				verr.Add(name, fmt.Sprintf("%s does not apply to count", name))
				continue
			}
			if prev, dup := paging[raw]; dup && prev != v {
				verr.Add(name, fmt.Sprintf("%s and Filter.%s disagree", name, name))
				continue
			}
			paging[raw] = v
			delete(aliased, raw)
		default:
			f, ok := r.Filter(raw)
			if m, member := r.Member(raw); !ok && member && m.WriteOnly {
				verr.Add(name, fmt.Sprintf("%s is write-only and cannot be filtered on", name))
				continue
			}
			if !ok {
				verr.Add(name, unknownFilter(r, raw, name))
				continue
			}
			val, err := f.Field.ParseText(v)
			if err != nil {
				verr.Add(name, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			q.Conds = append(q.Conds, engine.Cond{Field: f.Field, Op: f.Op, Value: val})
		}
	}
	pverr := &engine.ValidationError{}
	applyPaging(r, &q, paging, kind, pverr)
	for member, msgs := range pverr.Fields {
		for _, msg := range msgs {
			if aliased[member] {
				verr.Add("Filter."+member, "Filter."+msg)
			} else {
				verr.Add(member, msg)
			}
		}
	}
	if !verr.Empty() {
		return engine.Query{}, verr
	}
	return q, nil
}

// HasFormat reports whether values choose the result format (Format or Filter.Format), which
// then wins over the Accept header.
func HasFormat(values url.Values) bool { return values.Has("Format") || values.Has("Filter.Format") }

// MaxPage is the largest Page a list takes; deeper pages are read with Continue.
const MaxPage = 1_000_000

// pagingInt reads the paging parameter name's value v, an integer from 1 to max written as
// JSON writes one (engine.ParseInteger: 5, never +5 or 05), adding its problem to verr.
func pagingInt(verr *engine.ValidationError, name, v string, max int) int {
	n, ok := engine.ParseInteger(v)
	if !ok || n < 1 || n > int64(max) {
		verr.Add(name, fmt.Sprintf("%s %s must be an integer from 1 to %d, written without a sign or leading zeros", name, engine.Quoted(v), max))
		return 0
	}
	return int(n)
}

// applyPaging reads the paging parameters into q, adding their problems to verr under the
// unprefixed names (Take, Format); ListQuery renames those given as Filter.*.
func applyPaging(r *engine.Resource, q *engine.Query, paging map[string]string, kind Kind, verr *engine.ValidationError) {
	if kind == KindCount {
		// Count accepts the Filter.* parameters (api.md rule 1) and pages nothing with them, but
		// a value that list would refuse is refused here too (ListQuery names the parameter as
		// sent): Filter.Take=abc is a mistake whatever it is sent to, never a silent default.
		var scratch engine.Query
		applyPaging(r, &scratch, paging, KindList, verr)
		return
	}
	if v, ok := paging["Page"]; ok {
		q.Page = pagingInt(verr, "Page", v, MaxPage)
	}
	if v, ok := paging["Take"]; ok {
		q.Take = pagingInt(verr, "Take", v, r.MaxTake)
	}
	q.Sort = r.DefaultSort
	if v, ok := paging["Sort"]; ok {
		list := splitList(v)
		if max := len(r.Sortable()); len(list) > max {
			verr.Add("Sort", fmt.Sprintf("Sort has %d terms; it takes at most %d, one per sortable field", len(list), max))
			return
		}
		terms, err := r.SortTerms(list)
		if err != nil || len(terms) == 0 {
			verr.Add("Sort", fmt.Sprintf("Sort %s: %v; sortable fields are %s", engine.Quoted(v), errOrEmpty(err), strings.Join(r.Sortable(), ", ")))
		} else {
			q.Sort = terms
		}
	}
	if v, ok := paging["Format"]; ok {
		switch engine.Format(strings.ToLower(v)) {
		case engine.FormatJSON:
			q.Format = engine.FormatJSON
		case engine.FormatCSV:
			q.Format = engine.FormatCSV
		default:
			verr.Add("Format", fmt.Sprintf("Format %s must be json or csv", engine.Quoted(v)))
		}
	}
	base := r.Output
	if kind == KindSearch {
		base = r.SearchFields
	}
	inc, incGiven := paging["Includes"]
	exc, excGiven := paging["Excludes"]
	fields, err := project(base, incGiven, excGiven, splitList(inc), splitList(exc))
	if err != nil {
		verr.Add(err.member, err.msg)
	}
	q.Fields = fields
}

func errOrEmpty(err error) string {
	if err == nil {
		return "no sort field given"
	}
	return err.Error()
}

func splitList(v string) []string {
	if v == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

type memberErr struct{ member, msg string }

// project applies Includes (which also orders) and Excludes to a base projection. Either
// given without a name (empty, or commas and spaces only), or the two together leaving no
// member, are errors naming the parameter: both are comma lists of member names (decisions
// §5), so an empty one is a client's mistake (a template's empty variable) as an empty Sort or
// Format is, never "every member" or "exclude nothing"; and a record without members is no
// answer a client could have meant.
func project(base []*engine.Field, incGiven, excGiven bool, includes, excludes []string) ([]*engine.Field, *memberErr) {
	all := func() string {
		names := make([]string, len(base))
		for i, f := range base {
			names[i] = f.Name
		}
		return strings.Join(names, ", ")
	}
	find := func(param, name string) (*engine.Field, *memberErr) {
		for _, f := range base {
			if f.Name == name {
				return f, nil
			}
		}
		return nil, &memberErr{param, fmt.Sprintf("%s: %s is not a member of the result (%s)", param, engine.Quoted(name), all())}
	}
	for _, p := range []struct {
		name  string
		given bool
		names []string
	}{{"Includes", incGiven, includes}, {"Excludes", excGiven, excludes}} {
		if p.given && len(p.names) == 0 {
			return nil, &memberErr{p.name, fmt.Sprintf("%s names no member; name one or more of %s, or leave %s out", p.name, all(), p.name)}
		}
	}
	out := base
	if len(includes) > 0 {
		out = nil
		for _, name := range includes {
			f, err := find("Includes", name)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	if len(excludes) > 0 {
		drop := map[*engine.Field]bool{}
		for _, name := range excludes {
			f, err := find("Excludes", name)
			if err != nil {
				return nil, err
			}
			drop[f] = true
		}
		kept := make([]*engine.Field, 0, len(out))
		for _, f := range out {
			if !drop[f] {
				kept = append(kept, f)
			}
		}
		out = kept
		if len(out) == 0 {
			return nil, &memberErr{"Excludes", "Excludes leaves no member to return; exclude fewer of " + all()}
		}
	}
	return out, nil
}

// Fields reads Includes/Excludes for a get of r's full record.
func Fields(r *engine.Resource, values url.Values) ([]*engine.Field, error) {
	for name, vals := range values {
		if name != "Includes" && name != "Excludes" {
			shown := engine.ShownName(name)
			return nil, engine.InvalidMember(shown, "unknown parameter %s (Includes, Excludes)", shown)
		}
		if len(vals) != 1 {
			return nil, engine.InvalidMember(name, "%s is given %d times; give it once", name, len(vals))
		}
	}
	fields, err := project(r.Output, values.Has("Includes"), values.Has("Excludes"), splitList(values.Get("Includes")), splitList(values.Get("Excludes")))
	if err != nil {
		return nil, engine.InvalidMember(err.member, "%s", err.msg)
	}
	return fields, nil
}

// unknownFilter is the problem of a parameter that names no filter of r. One that names a
// member of the key says how the key is filtered: Identifier, the first key member's filter
// (decisions §5); a client that tries PersonIdentifier= learns the way.
func unknownFilter(r *engine.Resource, raw, name string) string {
	for i, k := range r.Key {
		if k.Name != raw {
			continue
		}
		if i == 0 {
			return fmt.Sprintf("unknown parameter %s; the key is filtered as Identifier (Identifier=<%s>)", name, name)
		}
		return fmt.Sprintf("unknown parameter %s; only the key's first member, %s, is filtered (as Identifier); get one record by its path", name, r.Key[0].Name)
	}
	return fmt.Sprintf("unknown parameter %s", name)
}
