package people

import (
	"context"
	"fmt"
	"net/mail"
	"unicode/utf8"

	"credo/engine"
)

// EmployeeTypes are the values EmployeeType may take besides empty (decisions §6).
var EmployeeTypes = []string{"Employee", "Contractor"}

// LocationField is the name of the person field that keeps a row's Location.
const LocationField = "Location"

// model holds the descriptors an import reads and writes, resolved once by resolve (the
// import route's Needs).
type model struct {
	user, person, field, conn *engine.Resource
	// email is the user's Email, which identifies a user as its unique constraint compares
	// it (ignoring ASCII case: engine.Field.Fold).
	email *engine.Field
}

// resolve resolves the descriptors in reg and keeps them.
func (m *model) resolve(reg *engine.Registry) error {
	for name, dst := range map[string]**engine.Resource{"User": &m.user, "Person": &m.person, "PersonField": &m.field, "UserConnection": &m.conn} {
		r, ok := reg.ByName(name)
		if !ok {
			return fmt.Errorf("people: no %s descriptor", name)
		}
		*dst = r
	}
	var ok bool
	if m.email, ok = m.user.Member("Email"); !ok {
		return fmt.Errorf("people: User has no member Email")
	}
	return nil
}

// importer is one import in progress: the rows, what the checks learned, the problems.
type importer struct {
	m    model
	rows []Row
	org  string
	// operator callers may link a user of another organization into org (decisions §11).
	operator bool
	ps       problems
	// ids are the rows' canonical PersonIdentifiers ("" when invalid); byID and byEmail give
	// the first row of each valid Identifier and well-formed Email (by its same key).
	ids     []string
	byID    map[string]int
	byEmail map[string]int
	// users maps the Emails (rows' and managers', by their same key) of existing users to
	// their identifiers; inOrg holds those users that have a person in the organization.
	users map[string]string
	inOrg map[string]bool
	// What plan decided: each row's user (existing or new) and its manager's user ("" for
	// none), and the existing connections between them (true when already a manager's).
	userIDs, managers []string
	existing          map[[2]string]bool
}

// importRows creates a person in org for every row (and its user when no user has the row's
// Email), with its manager connection, in one transaction of st. Any problem with any row
// writes nothing and is returned as one validation error listing the problems with their
// rows (the first engine.MaxRowProblems, every one counted; see problems): decoded (the members that did not decode, from decodeRows) and those the checks find
// in the members that did. by is the caller's user, recorded as CreatedBy ("" for none).
//
// Organization scope holds (decisions §11): a row whose Email is a user of another
// organization is the problem "Email … is already in use" unless operator is set, since a
// person for that user in org would make it readable there. Only operators link users
// across organizations.
func (m *model) importRows(ctx context.Context, st *engine.Store, rows []Row, decoded problems, org, by string, operator bool) error {
	im, err := m.plan(ctx, st, rows, decoded, org, operator)
	if err != nil {
		return err
	}
	return im.write(ctx, st, by)
}

// plan checks the rows and looks up what they name, deciding each row's records: the
// importer, ready to write, or the rows' problems.
func (m *model) plan(ctx context.Context, st *engine.Store, rows []Row, decoded problems, org string, operator bool) (*importer, error) {
	im := &importer{m: *m, rows: rows, org: org, operator: operator, ps: decoded}
	im.check()
	if err := im.lookUp(ctx, st); err != nil {
		return nil, err
	}
	im.resolve()
	if err := im.ps.err(); err != nil {
		return nil, err
	}
	var err error
	if im.existing, err = im.connections(ctx, st); err != nil {
		return nil, err
	}
	return im, nil
}

// check finds the problems each row has on its own or with other rows of the file. A member
// that did not decode has its problem already and is not checked (it is not missing).
func (im *importer) check() {
	u, p, f := im.m.user, im.m.person, im.m.field
	im.ids = make([]string, len(im.rows))
	im.byID, im.byEmail = map[string]int{}, map[string]int{}
	for i, r := range im.rows {
		switch id, err := engine.ParseUUID(r.Identifier); {
		case r.bad("Identifier"):
		case r.Identifier == "":
			im.ps.add("Identifier", i, "Identifier is required")
		case err != nil:
			im.ps.add("Identifier", i, "Identifier %s is not a UUID", engine.Quoted(r.Identifier))
		case id == engine.NilUUID:
			// A typed client's unset Guid, refused as a create over the API refuses it.
			im.ps.add("Identifier", i, "Identifier cannot be the nil UUID %s", id)
		default:
			if j, dup := im.byID[id]; dup {
				im.ps.add("Identifier", i, "Identifier %s is also the Identifier of row %d", id, j)
			} else {
				im.byID[id] = i
			}
			im.ids[i] = id
		}
		switch {
		case r.bad("Email"):
		case r.Email == "":
			im.ps.add("Email", i, "Email is required")
		case tooLong(u, "Email", r.Email):
			im.ps.add("Email", i, "Email is longer than %d characters", maxLen(u, "Email"))
		case !wellFormed(r.Email):
			im.ps.add("Email", i, "Email %s is not a well-formed address", engine.Quoted(r.Email))
		default:
			if j, dup := im.byEmail[im.same(r.Email)]; dup {
				im.ps.add("Email", i, "Email %s is also the Email of row %d", r.Email, j)
			} else {
				im.byEmail[im.same(r.Email)] = i
			}
		}
		for _, c := range []struct {
			member, value string
			r             *engine.Resource
			field         string
		}{{"FirstName", r.FirstName, u, "FirstName"}, {"LastName", r.LastName, u, "LastName"}} {
			if r.bad(c.member) {
				continue
			} else if c.value == "" {
				im.ps.add(c.member, i, "%s is required", c.member)
			} else if tooLong(c.r, c.field, c.value) {
				im.ps.add(c.member, i, "%s is longer than %d characters", c.member, maxLen(c.r, c.field))
			}
		}
		if full := fullName(r); tooLong(p, "FullName", full) || tooLong(u, "FullName", full) {
			im.ps.add("LastName", i, "FirstName and LastName make a FullName longer than %d characters", min(maxLen(p, "FullName"), maxLen(u, "FullName")))
		}
		if tooLong(p, "JobTitle", r.BusinessTitle) {
			im.ps.add("BusinessTitle", i, "BusinessTitle is longer than %d characters", maxLen(p, "JobTitle"))
		}
		if tooLong(f, "FieldValue", r.Location) {
			im.ps.add("Location", i, "Location is longer than %d characters", maxLen(f, "FieldValue"))
		}
		if r.EmployeeType != "" && r.EmployeeType != EmployeeTypes[0] && r.EmployeeType != EmployeeTypes[1] {
			im.ps.add("EmployeeType", i, "EmployeeType %s must be empty, %s or %s", engine.Quoted(r.EmployeeType), EmployeeTypes[0], EmployeeTypes[1])
		}
		switch {
		case r.bad("Manager") || r.Manager == "":
		case tooLong(u, "Email", r.Manager):
			// No user has it: it is neither looked up nor named whole in the problem.
			im.ps.add("Manager", i, "Manager is longer than %d characters", maxLen(u, "Email"))
			im.rows[i].fail("Manager")
		case im.same(r.Manager) == im.same(r.Email):
			im.ps.add("Manager", i, "Manager %s is the row's own Email", r.Manager)
		}
	}
}

// lookUp runs the batched queries: Identifiers already used (as a PersonIdentifier, or as a
// PersonCode in the organization), users by Email (rows' and managers'), and which of those
// users have a person in the organization.
func (im *importer) lookUp(ctx context.Context, st *engine.Store) error {
	p, u := im.m.person, im.m.user
	taken := map[string]bool{}
	err := lookup(ctx, st, p, "PersonIdentifier", engine.MatchIn, keys(im.byID), engine.AllOrganizations(), []string{"PersonIdentifier"}, func(rec engine.Record) {
		taken[str(p, rec, "PersonIdentifier")] = true
	})
	if err != nil {
		return err
	}
	for id := range taken {
		im.ps.add("Identifier", im.byID[id], "Identifier %s is already the identifier of a person", id)
	}
	// A person's PersonCode is unique in its organization, and an imported person's is its
	// Identifier: another person of the organization with that PersonCode is the row's
	// problem, in the import's terms. (The bulk load found it, reported in its own: "Person
	// another Person already has OrganizationIdentifier, PersonCode …" under
	// OrganizationIdentifier, and only once every other problem was gone.) A person whose
	// PersonIdentifier is taken is reported once, as taken. MatchSame, as the constraint
	// compares: its index leaves out empty PersonCodes, and PostgreSQL reads it for a list of
	// 500 only with that condition (with MatchIn it read every person of the organization
	// per list).
	codes := map[string]bool{}
	err = lookup(ctx, st, p, "PersonCode", engine.MatchSame, keys(im.byID), engine.Organization(im.org), []string{"PersonCode"}, func(rec engine.Record) {
		codes[str(p, rec, "PersonCode")] = true
	})
	if err != nil {
		return err
	}
	for code := range codes {
		if i, ok := im.byID[code]; ok && !taken[code] {
			im.ps.add("Identifier", i, "Identifier %s is already the PersonCode of a person of your organization, and an imported person's PersonCode is its Identifier", code)
		}
	}
	emails := map[string]bool{}
	for e := range im.byEmail {
		emails[e] = true
	}
	for _, r := range im.rows {
		if r.Manager != "" && !r.bad("Manager") {
			emails[im.same(r.Manager)] = true
		}
	}
	im.users = map[string]string{}
	err = lookup(ctx, st, u, "Email", engine.MatchSame, keys(emails), engine.AllOrganizations(), []string{"UserIdentifier", "Email"}, func(rec engine.Record) {
		im.users[im.same(str(u, rec, "Email"))] = str(u, rec, "UserIdentifier")
	})
	if err != nil {
		return err
	}
	found := make(map[string]bool, len(im.users))
	for _, id := range im.users {
		found[id] = true
	}
	im.inOrg = map[string]bool{}
	return lookup(ctx, st, p, "UserIdentifier", engine.MatchIn, keys(found), engine.Organization(im.org), []string{"UserIdentifier"}, func(rec engine.Record) {
		im.inOrg[str(p, rec, "UserIdentifier")] = true
	})
}

// resolve gives every row its user (existing or new) and its manager's user, reporting
// Emails that already have a person here and Managers that name nobody the import may use.
func (im *importer) resolve() {
	userIDs := make([]string, len(im.rows))
	managers := make([]string, len(im.rows))
	im.userIDs, im.managers = userIDs, managers
	for i, r := range im.rows {
		if id, ok := im.users[im.same(r.Email)]; ok {
			userIDs[i] = id
			switch {
			case im.byEmail[im.same(r.Email)] != i:
			case im.inOrg[id]:
				im.ps.add("Email", i, "Email %s already has a person in your organization", r.Email)
			case !im.operator:
				// Said alike whichever organization has the user: nothing to learn from it.
				im.ps.add("Email", i, "Email %s is already in use", r.Email)
			}
		} else {
			userIDs[i] = engine.NewID()
		}
	}
	for i, r := range im.rows {
		if r.Manager == "" || r.bad("Manager") || im.same(r.Manager) == im.same(r.Email) {
			continue
		}
		if j, ok := im.byEmail[im.same(r.Manager)]; ok {
			managers[i] = userIDs[j]
		} else if id, ok := im.users[im.same(r.Manager)]; ok && im.inOrg[id] {
			managers[i] = id
		} else {
			im.ps.add("Manager", i, "Manager %s is not the Email of a user of your organization or of a row of this file", r.Manager)
		}
	}
}

// connections returns the existing connections between the rows' existing users and their
// managers, with whether each is already a manager connection.
func (im *importer) connections(ctx context.Context, st *engine.Store) (map[[2]string]bool, error) {
	userIDs, managers := im.userIDs, im.managers
	existed := map[string]bool{}
	for _, id := range im.users {
		existed[id] = true
	}
	wanted := map[[2]string]bool{}
	from := map[string]bool{}
	for i, mgr := range managers {
		if mgr != "" && existed[mgr] && existed[userIDs[i]] {
			wanted[[2]string{mgr, userIDs[i]}] = true
			from[mgr] = true
		}
	}
	out := map[[2]string]bool{}
	if len(wanted) == 0 {
		return out, nil
	}
	c := im.m.conn
	isManager, _ := c.Member("IsManager")
	err := lookup(ctx, st, c, "FromUserIdentifier", engine.MatchIn, keys(from), engine.AllOrganizations(), []string{"FromUserIdentifier", "ToUserIdentifier", "IsManager"}, func(rec engine.Record) {
		pair := [2]string{str(c, rec, "FromUserIdentifier"), str(c, rec, "ToUserIdentifier")}
		if wanted[pair] {
			out[pair] = rec[isManager.Index] == true
		}
	})
	return out, err
}

// same returns the form of an Email that tells users apart: the users' unique constraint's
// (engine.Field.Fold), so that the rows, the Managers and the stored users compare as the
// database does.
func (im *importer) same(email string) string { return im.m.email.Fold().Key(email) }

// wellFormed reports whether s is a bare email address (no display name or angle brackets).
func wellFormed(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

func fullName(r Row) string { return r.FirstName + " " + r.LastName }

func maxLen(r *engine.Resource, member string) int {
	if f, ok := r.Member(member); ok {
		return f.MaxLen
	}
	return engine.MaxStringLength
}

func tooLong(r *engine.Resource, member, s string) bool {
	return len(s) > maxLen(r, member) && utf8.RuneCountInString(s) > maxLen(r, member)
}
