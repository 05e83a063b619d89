package legacy

import (
	"fmt"

	"gorm.io/gorm"

	"credo/engine"
)

// fragments are the SQL texts of the version-1 reads, built once from the descriptors.
type fragments struct {
	// eventSelect projects events aliased e into eventView's scan order.
	eventSelect string
	// registrationSelect projects a registration (r) with its event (e), person (p), user (u)
	// and form (f) into registrationRow's scan order; registrationJoins brings those in.
	registrationSelect string
	registrationJoins  []string
	// learnerName is the learner's display name: the person's, else the user's.
	learnerName string
}

func buildFragments(s *engine.Store, t tables) fragments {
	f := fragments{
		learnerName: fmt.Sprintf("COALESCE(NULLIF(%s, ''), %s)", sqlCol("p", t.person, "FullName"), sqlCol("u", t.user, "FullName")),
	}
	f.eventSelect = eventSelect(s, t)
	f.registrationJoins = []string{
		fmt.Sprintf("LEFT JOIN %s AS e ON %s = %s", s.Table(t.event), sqlCol("e", t.event, "EventIdentifier"), sqlCol("r", t.registration, "EventIdentifier")),
		fmt.Sprintf("LEFT JOIN %s AS p ON %s = %s AND %s = %s", s.Table(t.person),
			sqlCol("p", t.person, "UserIdentifier"), sqlCol("r", t.registration, "LearnerIdentifier"),
			sqlCol("p", t.person, "OrganizationIdentifier"), sqlCol("r", t.registration, "OrganizationIdentifier")),
		fmt.Sprintf("LEFT JOIN %s AS u ON %s = %s", s.Table(t.user), sqlCol("u", t.user, "UserIdentifier"), sqlCol("r", t.registration, "LearnerIdentifier")),
		fmt.Sprintf("LEFT JOIN %s AS f ON %s = %s", s.Table(t.form), sqlCol("f", t.form, "FormIdentifier"), sqlCol("r", t.registration, "FormIdentifier")),
	}
	f.registrationSelect = registrationSelect(t, f.learnerName)
	return f
}

// scanAll runs q and scans every row into a T through the destinations dests gives, in the
// order of q's select list. It never returns a nil slice, so that JSON lists are [] when empty.
func scanAll[T any](q *gorm.DB, dests func(*T) []any) ([]T, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, fmt.Errorf("legacy: query: %w", err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v T
		if err := rows.Scan(dests(&v)...); err != nil {
			return nil, fmt.Errorf("legacy: scan: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("legacy: query: %w", err)
	}
	return out, nil
}

// exists reports whether q finds a row.
func exists(q *gorm.DB) (bool, error) {
	var found []int
	if err := q.Select("1").Limit(1).Scan(&found).Error; err != nil {
		return false, fmt.Errorf("legacy: query: %w", err)
	}
	return len(found) > 0, nil
}
