package compliance

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"credo/engine"
)

// The descriptors the query reads, by the alias the SQL templates give them.
var aliases = map[string]string{
	"s": "ComplianceStatus",         // the rows reported
	"x": "ComplianceStatus",         // LearnerMustHaveProfile's probe
	"g": "Group",                    // the department
	"p": "Person",                   // the learner in the row's organization
	"l": "CompliancePrimaryProfile", // learner → primary profile
	"f": "ComplianceProfile",        // the primary profile
	"m": "Membership",               // employment
}

// placeholderRe matches `{a}` (a table with its alias) and `{a.Member}` (a column).
var placeholderRe = regexp.MustCompile(`\{([a-z])(?:\.([A-Za-z0-9]+))?\}`)

// schema is the descriptors of the aliases, resolved once (resolveSchema): when the
// summaries route is built (its Needs), or when Seed starts.
type schema map[string]*engine.Resource

// resolveSchema resolves the descriptor of every alias in reg.
func resolveSchema(reg *engine.Registry) (schema, error) {
	names := make([]string, 0, len(aliases))
	for alias := range aliases {
		names = append(names, alias)
	}
	sort.Strings(names)
	sc := schema{}
	for _, alias := range names {
		r, ok := reg.ByName(aliases[alias])
		if !ok {
			return nil, fmt.Errorf("compliance: no %s descriptor (alias %s)", aliases[alias], alias)
		}
		sc[alias] = r
	}
	return sc, nil
}

// expand replaces the placeholders of a SQL template by partition-qualified table names and
// descriptor column names, so that the SQL names nothing the descriptors do not define and
// cannot leave the store's partition. Request values never pass through here: they are bind
// parameters.
func (sc schema) expand(st *engine.Store, tmpl string) (string, error) {
	return sc.expandIn(st.Table, tmpl)
}

// expandIn is expand with the table names table gives.
func (sc schema) expandIn(table func(*engine.Resource) string, tmpl string) (string, error) {
	var err error
	out := placeholderRe.ReplaceAllStringFunc(tmpl, func(ph string) string {
		m := placeholderRe.FindStringSubmatch(ph)
		r, ok := sc[m[1]]
		if !ok {
			err = fmt.Errorf("compliance: no alias %s", m[1])
			return ""
		}
		if m[2] == "" {
			return table(r) + " AS " + m[1]
		}
		f, ok := r.Member(m[2])
		if !ok || !f.Stored() {
			err = fmt.Errorf("compliance: %s has no stored field %s", r.Name, m[2])
			return ""
		}
		return m[1] + `."` + f.Column + `"`
	})
	return out, err
}

const (
	selectSQL = `SELECT {s.DepartmentIdentifier}, {g.GroupType}, {g.GroupName}, {g.GroupSlug}, {g.GroupDescription},
  {s.LearnerIdentifier}, {p.FullName},
  {f.ProfileIdentifier}, {f.ProfileType}, {f.ProfileName}, {f.ProfileSlug}, {f.ProfileDescription},
  {s.MeasurementKey}, {s.Required}, {s.Satisfied}, {s.Expired}, {s.NotCompleted}, {s.NotApplicable},
  {s.NeedsTraining}, {s.SelfAssessed}, {s.Submitted}, {s.Validated}
FROM {s}
LEFT JOIN {g} ON {g.GroupIdentifier} = {s.DepartmentIdentifier}
LEFT JOIN {p} ON {p.UserIdentifier} = {s.LearnerIdentifier} AND {p.OrganizationIdentifier} = {s.OrganizationIdentifier}
LEFT JOIN {l} ON {l.OrganizationIdentifier} = {s.OrganizationIdentifier} AND {l.LearnerIdentifier} = {s.LearnerIdentifier}
LEFT JOIN {f} ON {f.ProfileIdentifier} = {l.ProfileIdentifier}
WHERE {s.ProfileVariant} = ?`
	scopeSQL       = `{s.OrganizationIdentifier} = ?`
	departmentsSQL = `{s.DepartmentIdentifier} IN ?`
	learnersSQL    = `{s.LearnerIdentifier} IN ?`
	measuresSQL    = `{s.MeasurementKey} IN ?`
	// employmentSQL: a membership of the learner in the row's department with a chosen function
	// (an index lookup on the membership's unique (UserIdentifier, GroupIdentifier)).
	employmentSQL = `EXISTS (SELECT 1 FROM {m} WHERE {m.UserIdentifier} = {s.LearnerIdentifier}
  AND {m.GroupIdentifier} = {s.DepartmentIdentifier} AND {m.MembershipFunction} IN ?)`
	// mustHaveProfileSQL: the learner has some requirement in the chosen variant, in any
	// department and measurement of the organization (a range of the status key).
	mustHaveProfileSQL = `EXISTS (SELECT 1 FROM {x} WHERE {x.OrganizationIdentifier} = {s.OrganizationIdentifier}
  AND {x.ProfileVariant} = {s.ProfileVariant} AND {x.LearnerIdentifier} = {s.LearnerIdentifier} AND {x.Required} > 0)`
	// orderSQL: learner name (unnamed learners last), then measurement key (decisions §9); the
	// learner, department name and department break ties so that the order is total.
	orderSQL = `
ORDER BY CASE WHEN {p.FullName} IS NULL THEN 1 ELSE 0 END, {p.FullName}, {s.LearnerIdentifier}, {s.MeasurementKey},
  CASE WHEN {g.GroupName} IS NULL THEN 1 ELSE 0 END, {g.GroupName}, {s.DepartmentIdentifier}`
)

// summaries serves the summaries route with the query's descriptors, which resolve (the
// route's Needs) keeps.
type summaries struct {
	sc schema
}

// resolve resolves the query's descriptors in reg and checks that every placeholder of its
// templates names a stored member of them.
func (s *summaries) resolve(reg *engine.Registry) error {
	sc, err := resolveSchema(reg)
	if err != nil {
		return err
	}
	for _, tmpl := range []string{selectSQL, scopeSQL, departmentsSQL, learnersSQL, measuresSQL, employmentSQL,
		mustHaveProfileSQL, orderSQL} {
		if _, err := sc.expandIn(func(*engine.Resource) string { return "" }, tmpl); err != nil {
			return err
		}
	}
	s.sc = sc
	return nil
}

// build returns the one SQL statement that answers q within scope, with its bind parameters.
// The zero Scope is refused.
func (s *summaries) build(st *engine.Store, q Request, scope engine.Scope) (string, []any, error) {
	org, one := scope.OrganizationID()
	if !one && !scope.All() {
		return "", nil, engine.ErrNoScope
	}
	var b strings.Builder
	args := []any{int64(q.ProfileCondition)}
	b.WriteString(selectSQL)
	and := func(cond string, arg any) {
		b.WriteString("\n  AND ")
		b.WriteString(cond)
		if arg != nil {
			args = append(args, arg)
		}
	}
	if one {
		and(scopeSQL, org)
	}
	if len(q.Departments) > 0 {
		and(departmentsSQL, q.Departments)
	}
	if len(q.Learners) > 0 {
		and(learnersSQL, q.Learners)
	}
	if len(q.Measurements) > 0 {
		keys := make([]int64, len(q.Measurements))
		for i, k := range q.Measurements {
			keys[i] = int64(k)
		}
		and(measuresSQL, keys)
	}
	if fns := q.Functions(); len(fns) > 0 {
		and(employmentSQL, fns)
	}
	if q.LearnerMustHaveProfile {
		and(mustHaveProfileSQL, nil)
	}
	b.WriteString(orderSQL)
	text, err := s.sc.expand(st, b.String())
	return text, args, err
}

// run runs q within scope and calls fn with each summary in order, reading rows one by one.
// All filtering happens in the database in one statement.
func (s *summaries) run(ctx context.Context, st *engine.Store, q Request, scope engine.Scope, fn func(*Summary) error) error {
	text, args, err := s.build(st, q, scope)
	if err != nil {
		return err
	}
	rows, err := st.DB(ctx).Raw(text, args...).Rows()
	if err != nil {
		return fmt.Errorf("compliance: summaries: %w", err)
	}
	defer rows.Close()
	var row summaryRow
	dests := row.dests()
	for rows.Next() {
		if err := rows.Scan(dests...); err != nil {
			return fmt.Errorf("compliance: summaries: scan: %w", err)
		}
		if err := fn(row.summary()); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("compliance: summaries: %w", err)
	}
	return nil
}

// summaryRow holds one result row as selectSQL lists its columns.
type summaryRow struct {
	dept                                            string
	deptType, deptName, deptSlug, deptDesc          sql.NullString
	learner                                         string
	learnerName                                     sql.NullString
	profile, profType, profName, profSlug, profDesc sql.NullString
	key                                             int64
	counts                                          [9]sql.NullInt64
}

func (r *summaryRow) dests() []any {
	d := []any{&r.dept, &r.deptType, &r.deptName, &r.deptSlug, &r.deptDesc,
		&r.learner, &r.learnerName,
		&r.profile, &r.profType, &r.profName, &r.profSlug, &r.profDesc, &r.key}
	for i := range r.counts {
		d = append(d, &r.counts[i])
	}
	return d
}

func (r *summaryRow) summary() *Summary {
	var c [9]int64
	for i, n := range r.counts {
		c[i] = n.Int64 // a null count is 0
	}
	s := &Summary{
		Department: Member{Identifier: r.dept, Type: str(r.deptType), Name: str(r.deptName),
			Slug: slug(r.deptSlug, r.deptName), Description: str(r.deptDesc)},
		Learner: Member{Identifier: r.learner, Type: ptr(LearnerType), Name: str(r.learnerName),
			Slug: slug(sql.NullString{}, r.learnerName)},
		Measurement: Measurement{Key: int(r.key), Name: MeasurementName(int(r.key)), Score: Score(c[0], c[1]),
			Required: c[0], Satisfied: c[1], Expired: c[2], NotCompleted: c[3], NotApplicable: c[4],
			NeedsTraining: c[5], SelfAssessed: c[6], Submitted: c[7], Validated: c[8]},
	}
	if r.profile.Valid {
		s.PrimaryProfile = &Member{Identifier: r.profile.String, Type: str(r.profType), Name: str(r.profName),
			Slug: slug(r.profSlug, r.profName), Description: str(r.profDesc)}
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func str(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

// slug returns the stored slug, or the slug of the name when none is stored; null when both
// are null or empty.
func slug(stored, name sql.NullString) *string {
	if stored.Valid && stored.String != "" {
		return &stored.String
	}
	if !name.Valid {
		return nil
	}
	if s := engine.Slugify(name.String); s != "" {
		return &s
	}
	return nil
}
