package compliance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"credo/engine"
)

// Limits of a compliance-summaries body.
const (
	// MaxBodyBytes caps the body (decisions §3); a larger one is a 413.
	MaxBodyBytes = 1 << 20
	// MaxListItems caps each of Departments, Learners and Measurements, so that the bind
	// parameters of one query stay within SQLite's and PostgreSQL's limits.
	MaxListItems = 10000
)

// ProfileCondition chooses which profiles' requirements the counts cover.
type ProfileCondition int

// The profile conditions (decisions §9); they are the ProfileVariant of ComplianceStatus rows.
const (
	PrimaryProfile    ProfileCondition = 1
	MandatoryProfiles ProfileCondition = 2
	AllProfiles       ProfileCondition = 3
)

// Valid reports whether c is one of the three conditions.
func (c ProfileCondition) Valid() bool {
	switch c {
	case PrimaryProfile, MandatoryProfiles, AllProfiles:
		return true
	}
	return false
}

// The MembershipFunction values that the employment flags select (decisions §6, §9).
const (
	FunctionDepartment     = "Department"
	FunctionOrganization   = "Organization"
	FunctionAdministration = "Administration"
)

// Request is a decoded compliance-summaries body. Empty lists mean all.
type Request struct {
	// Departments, Learners: group and user identifiers, lower-case, without duplicates.
	Departments []string
	Learners    []string
	// Measurements are keys 1..18 without duplicates.
	Measurements []int
	// ProfileCondition defaults to AllProfiles.
	ProfileCondition ProfileCondition
	// LearnerMustHaveProfile keeps learners with some Required > 0 in the chosen variant.
	LearnerMustHaveProfile bool
	// The employment flags; nil is false.
	DepartmentEmployment   *bool
	OrganizationEmployment *bool
	DataAccess             *bool
}

// Functions returns the membership functions the employment flags select, or nil when all
// three are false or null: then no employment filter applies (decisions §9).
func (q Request) Functions() []string {
	var out []string
	for _, f := range []struct {
		flag *bool
		name string
	}{
		{q.DepartmentEmployment, FunctionDepartment},
		{q.OrganizationEmployment, FunctionOrganization},
		{q.DataAccess, FunctionAdministration},
	} {
		if f.flag != nil && *f.flag {
			out = append(out, f.name)
		}
	}
	return out
}

// requestMembers are the members a body may carry, exactly as api.md spells them.
var requestMembers = []string{"Departments", "Learners", "Measurements", "ProfileCondition",
	"LearnerMustHaveProfile", "DepartmentEmployment", "OrganizationEmployment", "DataAccess"}

// DecodeRequest reads a compliance-summaries body strictly (engine.DecodeObject): a JSON object
// (an empty body or null is an empty object) whose members are those of api.md with their
// exact case and type.
// Every problem is reported in one *engine.ValidationError naming the member.
func DecodeRequest(body []byte) (Request, error) {
	q := Request{ProfileCondition: AllProfiles}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || string(body) == "null" {
		return q, nil
	}
	members, err := engine.DecodeObject(body)
	if err != nil {
		return q, err
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	verr := &engine.ValidationError{}
	for _, name := range names {
		raw := members[name]
		var err error
		switch name {
		case "Departments":
			q.Departments, err = uuidList(raw)
		case "Learners":
			q.Learners, err = uuidList(raw)
		case "Measurements":
			q.Measurements, err = measurementList(raw)
		case "ProfileCondition":
			var n int64
			if n, err = integer(raw); err == nil && !ProfileCondition(n).Valid() {
				err = fmt.Errorf("must be 1 (primary profile), 2 (mandatory profiles) or 3 (all profiles), not %d", n)
			}
			q.ProfileCondition = ProfileCondition(n)
		case "LearnerMustHaveProfile":
			var b *bool
			if b, err = boolean(raw); err == nil && b == nil {
				err = fmt.Errorf("must be true or false, not null")
			}
			q.LearnerMustHaveProfile = b != nil && *b
		case "DepartmentEmployment":
			q.DepartmentEmployment, err = boolean(raw)
		case "OrganizationEmployment":
			q.OrganizationEmployment, err = boolean(raw)
		case "DataAccess":
			q.DataAccess, err = boolean(raw)
		default:
			shown := engine.ShownName(name)
			verr.Add(shown, fmt.Sprintf("%s is not a member of the compliance-summaries body (%s)", shown, strings.Join(requestMembers, ", ")))
			continue
		}
		if err != nil {
			verr.Add(name, fmt.Sprintf("%s %v", name, err))
		}
	}
	if !verr.Empty() {
		return Request{ProfileCondition: AllProfiles}, verr
	}
	return q, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// array splits a JSON array (or null) into its elements, capped at MaxListItems.
func array(raw json.RawMessage, what string) ([]json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("must be an array of %s or null", what)
	}
	if len(items) > MaxListItems {
		return nil, fmt.Errorf("has %d items; the maximum is %d", len(items), MaxListItems)
	}
	return items, nil
}

func uuidList(raw json.RawMessage) ([]string, error) {
	items, err := array(raw, "UUID strings")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, item := range items {
		var s string
		if isNull(item) || json.Unmarshal(item, &s) != nil {
			return nil, fmt.Errorf("item %d must be a UUID string", i)
		}
		id, err := engine.ParseUUID(s)
		if err != nil {
			return nil, fmt.Errorf("item %d: %v", i, err)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

func measurementList(raw json.RawMessage) ([]int, error) {
	items, err := array(raw, "measurement keys")
	if err != nil {
		return nil, err
	}
	var out []int
	for i, item := range items {
		n, err := integer(item)
		if err != nil || n < MinMeasurementKey || n > MaxMeasurementKey {
			return nil, fmt.Errorf("item %d must be a measurement key from %d to %d", i, MinMeasurementKey, MaxMeasurementKey)
		}
		if !slices.Contains(out, int(n)) {
			out = append(out, int(n))
		}
	}
	return out, nil
}

// integer reads a JSON number that is a 32-bit integer (api.md: int is int32), exactly: a
// quoted number is the wrong JSON type.
func integer(raw json.RawMessage) (int64, error) { return engine.JSONInt(raw) }

// boolean reads true, false or null (nil).
func boolean(raw json.RawMessage) (*bool, error) {
	if isNull(raw) {
		return nil, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("must be true, false or null")
	}
	return &b, nil
}
