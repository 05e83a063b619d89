package legacy

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"credo/engine"
)

// tables are the descriptors the version-1 API reads and writes. Table and column names come
// only from them, partition-qualified through the store.
type tables struct {
	event, venue, form, billing, registration, accommodation, callback, progress, person, user *engine.Resource
}

// resolveTables resolves the descriptors of reg that the package reads and writes, once when
// the API is built, and checks every member the package names: a registry without one fails
// start-up rather than a request.
func resolveTables(reg *engine.Registry) (tables, error) {
	var t tables
	for _, n := range []struct {
		dst     **engine.Resource
		name    string
		members []string
	}{
		{&t.event, "Event", []string{"EventIdentifier", "OrganizationIdentifier", "EventNumber", "EventTitle", "EventType",
			"EventVenue", "EventStart", "EventEnd", "EventExamType", "EventExamFormat", "EventBillingCode",
			"RegistrationLimit", "EventCancelled", "EventCancelReason"}},
		{&t.venue, "Venue", []string{"VenueIdentifier", "OrganizationIdentifier", "VenueName"}},
		{&t.form, "AssessmentForm", []string{"FormIdentifier", "OrganizationIdentifier", "FormCode", "FormName", "FormTitle",
			"FormPublished", "FormTimeLimit"}},
		{&t.billing, "BillingCode", []string{"OrganizationIdentifier", "BillingCode"}},
		{&t.registration, "Registration", []string{"RegistrationIdentifier", "OrganizationIdentifier", "EventIdentifier",
			"LearnerIdentifier", "FormIdentifier", "RegistrantType", "AttendanceStatus", "TimeLimit",
			"LastChangeTime", "LastChangeType", "LastChangeUser", "Cancelled", "CancelReason", "TransferReason"}},
		{&t.accommodation, "Accommodation", []string{"RegistrationIdentifier", "AccommodationType", "AccommodationName", "TimeExtension"}},
		{&t.callback, "CallbackEvent", []string{"CallbackIdentifier", "ActivityIdentifier", "LearnerIdentifier", "CallbackReceived",
			"ContentType", "Payload", "LessonStatus"}},
		{&t.progress, "ActivityProgress", []string{"ActivityIdentifier", "LearnerIdentifier", "Completed", "Status"}},
		{&t.person, "Person", []string{"UserIdentifier", "OrganizationIdentifier", "FullName", "PersonCode"}},
		{&t.user, "User", []string{"UserIdentifier", "Email", "FullName"}},
	} {
		r, ok := reg.ByName(n.name)
		if !ok {
			return tables{}, fmt.Errorf("legacy: no %s descriptor", n.name)
		}
		for _, m := range n.members {
			if f, ok := r.Member(m); !ok || !f.Stored() {
				return tables{}, fmt.Errorf("legacy: %s has no stored member %s", n.name, m)
			}
		}
		*n.dst = r
	}
	return t, nil
}

// column returns the SQL column of a stored member; resolveTables checks every member the
// package names, so a panic here is a build defect.
func column(r *engine.Resource, member string) string { return field(r, member).Column }

// field returns a stored member of r; the version-1 API is built only on descriptors that
// have the members it reads, so a missing one is a build defect.
func field(r *engine.Resource, member string) *engine.Field {
	f, ok := r.Member(member)
	if !ok || !f.Stored() {
		panic(fmt.Sprintf("legacy: descriptor %s has no stored member %s", r.Name, member))
	}
	return f
}

// sqlCol renders alias."column" for SQL text.
func sqlCol(alias string, r *engine.Resource, member string) string {
	return alias + `."` + column(r, member) + `"`
}

// col is a member's column under alias, for typed conditions whose values are bind parameters.
func col(alias string, r *engine.Resource, member string) clause.Column {
	return clause.Column{Table: alias, Name: column(r, member)}
}

// eq is `alias.member = value`.
func eq(alias string, r *engine.Resource, member string, value any) clause.Expression {
	return clause.Eq{Column: col(alias, r, member), Value: value}
}

// from starts a query on a resource's partition-qualified table under alias.
func (a *api) from(db *gorm.DB, r *engine.Resource, alias string) *gorm.DB {
	return db.Table(a.store.Table(r) + " AS " + alias)
}

// table returns a resource's partition-qualified table for GORM statements without alias.
func (a *api) table(db *gorm.DB, r *engine.Resource) *gorm.DB {
	return db.Table(a.store.TableName(r))
}

// draft is a new record for Store.Create: members are set by name and the engine fills the
// rest with their defaults and validates it, exactly as a v2 create or `credo load` would.
type draft struct{ d engine.Draft }

func newDraft(r *engine.Resource) *draft { return &draft{d: r.NewDraft()} }

// set gives a member a record value: nil, string (uuid, string), bool, int64 or engine.DateTime.
func (d *draft) set(member string, v any) *draft {
	if err := d.d.Set(member, v); err != nil {
		panic(fmt.Sprintf("legacy: %v", err))
	}
	return d
}

func (d *draft) insert(ctx context.Context, tx *engine.Store) error {
	_, err := tx.Create(ctx, d.d.Resource(), d.d, engine.AllOrganizations())
	return err
}

// opt turns an optional value into a record value (nil for absent).
func opt[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// Advisory locks (PostgreSQL). SQLite needs none: its transactions begin IMMEDIATE, so writers
// are serialized already. A transaction takes locks in this order only, so that no two wait on
// each other in a cycle: its registration, then venue minutes in ascending order, then the
// organization's event numbering.

func registrationLock(id string) string { return "registration:" + id }

func numberLock(org string) string { return "event-number:" + org }

func venueMinuteLock(venue string, minute int64) string {
	return "venue:" + venue + ":" + strconv.FormatInt(minute, 10)
}

// startMinute is the Unix minute that holds an instant.
func startMinute(d engine.DateTime) int64 {
	s := d.Unix()
	if s < 0 && s%60 != 0 {
		return s/60 - 1
	}
	return s / 60
}

// matchLocks are the locks a lookup of events matching start at venue takes. Such events start
// in (start-1min, start], so within start's minute or the one before: two requests that could
// match or create the same event always share one of these two locks.
func matchLocks(venue string, start engine.DateTime) []string {
	m := startMinute(start)
	return []string{venueMinuteLock(venue, m-1), venueMinuteLock(venue, m)}
}

// lock takes PostgreSQL transaction-scoped advisory locks on keys, in the order given.
func (a *api) lock(db *gorm.DB, keys ...string) error {
	if a.store.Dialect() != engine.Postgres {
		return nil
	}
	for _, k := range keys {
		h := fnv.New64a()
		_, _ = h.Write([]byte("credo:v1:" + a.store.Partition + ":" + k))
		if err := db.Exec("SELECT pg_advisory_xact_lock(?)", int64(h.Sum64())).Error; err != nil {
			return fmt.Errorf("legacy: lock %s: %w", k, err)
		}
	}
	return nil
}
