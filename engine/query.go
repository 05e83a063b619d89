package engine

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Format is the representation of list, search and export results.
type Format string

// The result formats.
const (
	FormatJSON Format = "json"
	FormatCSV  Format = "csv"
)

// Cond is one typed filter condition.
type Cond struct {
	Field *Field
	Op    MatchOp
	Value any
}

// Query is a parsed count, list, search or export request.
type Query struct {
	Conds []Cond
	// Page is 1-based; Take is the page size.
	Page, Take int
	Sort       []SortTerm
	// Fields is the projection, in output order.
	Fields []*Field
	Format Format
	// org is the organization the verb's scope limits the query to ("" for none); the verbs
	// set it from their Scope argument.
	org string
	// Origin holds the Origin.* parameters, checked and kept for logging only.
	Origin map[string]string
}

// Kind says which projection a query starts from.
type Kind int

// Query kinds: count takes no paging, list projects the record, search the reduced record.
const (
	KindCount Kind = iota
	KindList
	KindSearch
)

// originParams are the Origin.* parameters every count, list and search accepts (api.md rule 4),
// typed as fields so that they are checked like filters.
var originParams = func() map[string]*Field {
	m := map[string]*Field{}
	for name, t := range map[string]Type{
		"Origin.When": TypeDateTime, "Origin.Organization": TypeUUID, "Origin.User": TypeUUID,
		"Origin.Proxy": TypeUUID, "Origin.Description": TypeString, "Origin.Reason": TypeString,
		"Origin.Source": TypeString,
	} {
		m[name] = &Field{Name: name, Type: t, MaxLen: MaxStringLength}
	}
	return m
}()

var pagingParams = []string{"Page", "Take", "Sort", "Excludes", "Includes", "Format"}

// ParseQuery reads the query parameters of a count, list or search of r. Unknown parameters,
// values of the wrong type and out-of-range paging are *ValidationErrors naming the parameter.
func (r *Resource) ParseQuery(values url.Values, kind Kind) (Query, error) {
	q := Query{Page: 1, Take: DefaultTake, Format: FormatJSON}
	verr := &ValidationError{}
	paging := map[string]string{}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		vals := values[name]
		if len(vals) != 1 {
			verr.Add(name, fmt.Sprintf("%s is given %d times; give it once", name, len(vals)))
			continue
		}
		v := vals[0]
		switch {
		case name == "Identifier":
			id, err := r.Key[0].ParseText(v)
			if err != nil {
				verr.Add(name, fmt.Sprintf("Identifier: %v", err))
				continue
			}
			q.Conds = append(q.Conds, Cond{Field: r.Key[0], Op: MatchEq, Value: id})
		case strings.HasPrefix(name, "Origin."):
			f, ok := originParams[name]
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
			q.Origin[name] = v
		case strings.HasPrefix(name, "Filter."):
			p := strings.TrimPrefix(name, "Filter.")
			if !isPagingParam(p) {
				verr.Add(name, fmt.Sprintf("unknown parameter %s (Filter.%s)", name, strings.Join(pagingParams, ", Filter.")))
				continue
			}
			if prev, dup := paging[p]; dup && prev != v {
				verr.Add(name, fmt.Sprintf("%s and %s disagree", name, p))
				continue
			}
			paging[p] = v
		case isPagingParam(name):
			if kind == KindCount {
				verr.Add(name, fmt.Sprintf("%s does not apply to count", name))
				continue
			}
			if prev, dup := paging[name]; dup && prev != v {
				verr.Add(name, fmt.Sprintf("%s and Filter.%s disagree", name, name))
				continue
			}
			paging[name] = v
		default:
			f, ok := r.filterByKey[name]
			if m, member := r.byName[name]; !ok && member && m.WriteOnly {
				verr.Add(name, fmt.Sprintf("%s is write-only and cannot be filtered on", name))
				continue
			}
			if !ok {
				verr.Add(name, fmt.Sprintf("unknown parameter %s", name))
				continue
			}
			val, err := f.Field.ParseText(v)
			if err != nil {
				verr.Add(name, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			q.Conds = append(q.Conds, Cond{Field: f.Field, Op: f.Op, Value: val})
		}
	}
	r.applyPaging(&q, paging, kind, verr)
	if !verr.Empty() {
		return Query{}, verr
	}
	return q, nil
}

func isPagingParam(p string) bool {
	for _, n := range pagingParams {
		if n == p {
			return true
		}
	}
	return false
}

func (r *Resource) applyPaging(q *Query, paging map[string]string, kind Kind, verr *ValidationError) {
	if kind == KindCount {
		return
	}
	if v, ok := paging["Page"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			verr.Add("Page", fmt.Sprintf("Page %q must be an integer from 1 to 1000000", v))
		}
		q.Page = n
	}
	if v, ok := paging["Take"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > r.MaxTake {
			verr.Add("Take", fmt.Sprintf("Take %q must be an integer from 1 to %d", v, r.MaxTake))
		}
		q.Take = n
	}
	q.Sort = r.DefaultSort
	if v, ok := paging["Sort"]; ok {
		list := splitList(v)
		if max := len(r.sortable()); len(list) > max {
			verr.Add("Sort", fmt.Sprintf("Sort has %d terms; it takes at most %d, one per sortable field", len(list), max))
			return
		}
		terms, err := parseSortTerms(r, list)
		if err != nil || len(terms) == 0 {
			verr.Add("Sort", fmt.Sprintf("Sort %q: %v; sortable fields are %s", v, errOrEmpty(err), strings.Join(r.sortable(), ", ")))
		} else {
			q.Sort = terms
		}
	}
	if v, ok := paging["Format"]; ok {
		switch Format(strings.ToLower(v)) {
		case FormatJSON:
			q.Format = FormatJSON
		case FormatCSV:
			q.Format = FormatCSV
		default:
			verr.Add("Format", fmt.Sprintf("Format %q must be json or csv", v))
		}
	}
	base := r.Output
	if kind == KindSearch {
		base = r.SearchFields
	}
	inc, incGiven := paging["Includes"]
	fields, err := project(base, incGiven, splitList(inc), splitList(paging["Excludes"]))
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

// sortable lists the fields Sort accepts.
func (r *Resource) sortable() []string {
	var out []string
	for _, f := range r.Fields {
		if !f.WriteOnly {
			out = append(out, f.Name)
		}
	}
	return out
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

// project applies Includes (which also orders) and Excludes to a base projection. Includes
// given without a name, or the two together leaving no member, are errors: a record without
// members is no answer a client could have meant.
func project(base []*Field, incGiven bool, includes, excludes []string) ([]*Field, *memberErr) {
	find := func(param, name string) (*Field, *memberErr) {
		for _, f := range base {
			if f.Name == name {
				return f, nil
			}
		}
		names := make([]string, len(base))
		for i, f := range base {
			names[i] = f.Name
		}
		return nil, &memberErr{param, fmt.Sprintf("%s: %q is not a member of the result (%s)", param, name, strings.Join(names, ", "))}
	}
	all := func() string {
		names := make([]string, len(base))
		for i, f := range base {
			names[i] = f.Name
		}
		return strings.Join(names, ", ")
	}
	if incGiven && len(includes) == 0 {
		return nil, &memberErr{"Includes", fmt.Sprintf("Includes names no member; name one or more of %s", all())}
	}
	out := base
	if len(includes) > 0 {
		out = nil
		for _, name := range includes {
			f, err := find("Includes", name)
			if err != nil {
				return nil, err
			}
			if !containsField(out, f) {
				out = append(out, f)
			}
		}
	}
	if len(excludes) > 0 {
		drop := map[*Field]bool{}
		for _, name := range excludes {
			f, err := find("Excludes", name)
			if err != nil {
				return nil, err
			}
			drop[f] = true
		}
		kept := make([]*Field, 0, len(out))
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

// ParseFields reads Includes/Excludes for a get of the full record.
func (r *Resource) ParseFields(values url.Values) ([]*Field, error) {
	for name, vals := range values {
		if name != "Includes" && name != "Excludes" {
			return nil, InvalidMember(name, "unknown parameter %s (Includes, Excludes)", name)
		}
		if len(vals) != 1 {
			return nil, InvalidMember(name, "%s is given %d times; give it once", name, len(vals))
		}
	}
	fields, err := project(r.Output, values.Has("Includes"), splitList(values.Get("Includes")), splitList(values.Get("Excludes")))
	if err != nil {
		return nil, InvalidMember(err.member, "%s", err.msg)
	}
	return fields, nil
}

// ParseKey reads the path segments of an item into key values; a segment that is not of the
// key's type means no such record (404), as decisions §4 says.
func (r *Resource) ParseKey(segments []string) ([]any, error) {
	if len(segments) != len(r.Key) {
		return nil, fmt.Errorf("engine: %s takes %d key segments: %w", r.Name, len(r.Key), ErrNotFound)
	}
	key := make([]any, len(segments))
	for i, s := range segments {
		v, err := r.Key[i].ParseText(s)
		if err != nil {
			return nil, fmt.Errorf("engine: %s key %s %q: %w", r.Name, r.Key[i].Name, s, ErrNotFound)
		}
		key[i] = v
	}
	return key, nil
}
