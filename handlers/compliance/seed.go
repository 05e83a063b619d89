package compliance

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"

	"credo/engine"
)

// DepartmentGroupType is the GroupType of the groups that Seed treats as departments (compared
// case-insensitively).
const DepartmentGroupType = "Department"

// seedProfiles are the profiles Seed gives every organization: Type, Name, Description.
var seedProfiles = [][3]string{
	{"Occupation", "Plant Operator", "Operates and monitors process equipment on shift."},
	{"Occupation", "Maintenance Technician", "Inspects, maintains and repairs plant equipment."},
	{"Occupation", "Site Supervisor", "Leads a crew and signs off safe work permits."},
	{"Occupation", "Office Administrator", "Keeps records, schedules and HR documents current."},
}

// seedMaxRequired is the largest Required of each measurement key in the all-profiles variant.
var seedMaxRequired = [MaxMeasurementKey]int{2, 3, 6, 6, 4, 4, 3, 3, 2, 2, 4, 5, 3, 4, 3, 3, 2, 3}

// Seed fills the compliance tables for the departments (groups of DepartmentGroupType) already
// in the partition: every member of a department (by membership; when an organization has no
// department memberships, its people are spread over its departments) gets a primary profile
// (most learners) and status counts for all 18 measurements in the three profile variants, the
// primary and mandatory variants being subsets of all profiles. It replaces the compliance rows
// of each organization it seeds, so it can run again; for the same rng state and partition
// content it writes the same rows.
func Seed(ctx context.Context, st *engine.Store, rng *rand.Rand) error {
	sc, err := resolveSchema(st.Registry())
	if err != nil {
		return fmt.Errorf("compliance: seed: %w", err)
	}
	plan, err := seedPlan(ctx, st, sc)
	if err != nil {
		return err
	}
	status, profile, link := sc["s"], sc["f"], sc["l"]
	for _, org := range plan {
		err := st.Transaction(ctx, func(tx *engine.Store) error {
			for _, r := range []*engine.Resource{status, link, profile} {
				if _, err := tx.DeleteWhere(ctx, r, "OrganizationIdentifier", org.id); err != nil {
					return err
				}
			}
			var profiles []string
			for _, p := range seedProfiles {
				id := seedID(rng)
				profiles = append(profiles, id)
				if err := insert(ctx, tx, profile, map[string]any{"ProfileIdentifier": id, "OrganizationIdentifier": org.id,
					"ProfileType": p[0], "ProfileName": p[1], "ProfileSlug": engine.Slugify(p[1]), "ProfileDescription": p[2]}); err != nil {
					return err
				}
			}
			hasPrimary := map[string]bool{}
			for _, pair := range org.pairs {
				learner := pair[1]
				if _, done := hasPrimary[learner]; done {
					continue
				}
				hasPrimary[learner] = rng.IntN(100) < 85
				if hasPrimary[learner] {
					if err := insert(ctx, tx, link, map[string]any{"OrganizationIdentifier": org.id, "LearnerIdentifier": learner,
						"ProfileIdentifier": profiles[rng.IntN(len(profiles))]}); err != nil {
						return err
					}
				}
			}
			for _, pair := range org.pairs {
				for key := MinMeasurementKey; key <= MaxMeasurementKey; key++ {
					variants := seedCounts(rng, key, hasPrimary[pair[1]])
					for v, c := range variants {
						rec := map[string]any{"OrganizationIdentifier": org.id, "DepartmentIdentifier": pair[0],
							"LearnerIdentifier": pair[1], "MeasurementKey": int64(key), "ProfileVariant": int64(v + 1)}
						for i, name := range countMembers {
							rec[name] = c[i]
						}
						if err := insert(ctx, tx, status, rec); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("compliance: seed organization %s: %w", org.id, err)
		}
	}
	return nil
}

// countMembers are the ComplianceStatus counts in Measurement's order.
var countMembers = [9]string{"Required", "Satisfied", "Expired", "NotCompleted", "NotApplicable",
	"NeedsTraining", "SelfAssessed", "Submitted", "Validated"}

// seedCounts draws the requirements of one learner and measurement in the all-profiles variant
// and returns the counts of the primary, mandatory and all variants (ProfileVariant 1, 2, 3).
func seedCounts(rng *rand.Rand, key int, hasPrimary bool) [3][9]int64 {
	var out [3][9]int64
	optional := key >= 7 && key <= 10 // the Optional … Competency measurements
	n := rng.IntN(seedMaxRequired[key-1] + 1)
	for range n {
		// One requirement: its status, then which variants include it.
		var item [9]int64
		item[0] = 1
		switch p := rng.IntN(100); {
		case p < 62:
			item[1] = 1
			if rng.IntN(100) < 70 {
				item[8] = 1 // validated
			} else if rng.IntN(100) < 50 {
				item[6] = 1 // self-assessed, not yet validated
			}
		case p < 70:
			item[2] = 1
		case p < 88:
			item[3] = 1
			if rng.IntN(100) < 40 {
				item[7] = 1 // submitted for validation
			}
		case p < 95:
			item[5] = 1
		default:
			item[4] = 1
		}
		inPrimary := hasPrimary && rng.IntN(100) < 60
		inMandatory := !optional && rng.IntN(100) < 80
		for i := range item {
			out[2][i] += item[i]
			if inMandatory {
				out[1][i] += item[i]
			}
			if inPrimary {
				out[0][i] += item[i]
			}
		}
	}
	return out
}

// seedOrg is one organization to seed: its (department, learner) pairs in a stable order.
type seedOrg struct {
	id    string
	pairs [][2]string
}

// seedPlan reads the departments, their members and, as a fallback, the people of each
// organization, ordered so that Seed is deterministic.
func seedPlan(ctx context.Context, st *engine.Store, sc schema) ([]*seedOrg, error) {
	var orgs []*seedOrg
	byID := map[string]*seedOrg{}
	depts := map[string][]string{}
	hasMembers := map[string]bool{}
	err := query(ctx, st, sc, `SELECT {g.OrganizationIdentifier}, {g.GroupIdentifier} FROM {g}
WHERE lower({g.GroupType}) = lower(?) ORDER BY {g.OrganizationIdentifier}, {g.GroupIdentifier}`,
		[]any{DepartmentGroupType}, func(v []string) {
			org, group := v[0], v[1]
			if byID[org] == nil {
				byID[org] = &seedOrg{id: org}
				orgs = append(orgs, byID[org])
			}
			depts[org] = append(depts[org], group)
		})
	if err != nil {
		return nil, err
	}
	err = query(ctx, st, sc, `SELECT {g.OrganizationIdentifier}, {m.GroupIdentifier}, {m.UserIdentifier} FROM {m}
JOIN {g} ON {g.GroupIdentifier} = {m.GroupIdentifier}
WHERE lower({g.GroupType}) = lower(?)
ORDER BY {g.OrganizationIdentifier}, {m.GroupIdentifier}, {m.UserIdentifier}`,
		[]any{DepartmentGroupType}, func(v []string) {
			byID[v[0]].pairs = append(byID[v[0]].pairs, [2]string{v[1], v[2]})
			hasMembers[v[0]] = true
		})
	if err != nil {
		return nil, err
	}
	// Organizations without department memberships: deal their people over the departments.
	n := map[string]int{}
	err = query(ctx, st, sc, `SELECT {p.OrganizationIdentifier}, {p.UserIdentifier} FROM {p}
ORDER BY {p.OrganizationIdentifier}, {p.UserIdentifier}`, nil, func(v []string) {
		org, user := v[0], v[1]
		if byID[org] == nil || hasMembers[org] {
			return
		}
		ds := depts[org]
		byID[org].pairs = append(byID[org].pairs, [2]string{ds[n[org]%len(ds)], user})
		n[org]++
	})
	return orgs, err
}

// query runs a template (see expand) whose columns are all text or uuid and calls fn with
// each row's values (null as "").
func query(ctx context.Context, st *engine.Store, sc schema, tmpl string, args []any, fn func(vals []string)) error {
	text, err := sc.expand(st, tmpl)
	if err != nil {
		return err
	}
	rows, err := st.DB(ctx).Raw(text, args...).Rows()
	if err != nil {
		return fmt.Errorf("compliance: seed: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("compliance: seed: %w", err)
	}
	cells := make([]sql.NullString, len(cols))
	dests := make([]any, len(cols))
	vals := make([]string, len(cols))
	for i := range cells {
		dests[i] = &cells[i]
	}
	for rows.Next() {
		if err := rows.Scan(dests...); err != nil {
			return fmt.Errorf("compliance: seed: %w", err)
		}
		for i, c := range cells {
			vals[i] = c.String
		}
		fn(vals)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("compliance: seed: %w", err)
	}
	return nil
}

// insert stores a record of r from member values, through the engine's validation.
func insert(ctx context.Context, st *engine.Store, r *engine.Resource, values map[string]any) error {
	d, err := r.DraftOf(values)
	if err != nil {
		return err
	}
	_, err = st.Create(ctx, r, d, engine.AllOrganizations())
	return err
}

// seedID draws a version-4 UUID from rng, so that seeded keys are reproducible.
func seedID(rng *rand.Rand) string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		u := rng.Uint64()
		for j := range 8 {
			b[i+j] = byte(u >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
