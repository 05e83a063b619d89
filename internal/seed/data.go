package seed

import (
	"fmt"
	"strings"

	"credo/auth"
)

var (
	firstNames = []string{"Amara", "Ben", "Chloé", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal",
		"Kaia", "Liam", "Maya", "Noah", "Olu", "Priya", "Quinn", "Rosa", "Sami", "Tariq", "Uma", "Victor", "Wen", "Yara", "Zoe"}
	lastNames = []string{"Abbott", "Bergström", "Chen", "Dubois", "Eze", "Fischer", "García", "Haddad", "Ivanova",
		"Johnson", "Kowalski", "Lefebvre", "Murphy", "Nakamura", "O'Brien", "Patel", "Quintero", "Rossi", "Singh", "Tremblay"}
	departments = []string{"Operations", "Maintenance", "Safety", "Logistics", "Quality Assurance"}
	jobTitles   = []string{"Operator", "Technician", "Supervisor", "Coordinator", "Inspector", "Apprentice"}
	cities      = []struct{ city, province string }{{"Calgary", "AB"}, {"Edmonton", "AB"}, {"Regina", "SK"}, {"Winnipeg", "MB"}, {"Vancouver", "BC"}}
	courses     = []string{"Confined Space Entry", "Fall Protection", "First Aid Level 2", "Forklift Operation", "H2S Alive", "Lockout Tagout", "WHMIS 2015"}
	orgs        = [MinPeople]struct{ code, name string }{{"ACME", "Acme Energy"}, {"NORTH", "Northern Rail"}, {"WEST", "Westshore Mining"}}
)

// roleGrants are the demo roles and what they may do on every group path.
var roleGrants = []struct {
	role  string
	flags []string
}{
	{"Administrators", []string{"Administrate"}},
	{"Instructors", []string{"Read", "Write", "Create"}},
	{"Learners", []string{"Read"}},
}

// run seeds every step in order; later steps refer to earlier rows.
func (s *seeder) run() error {
	type org struct {
		id, code string
		depts    []string
		roles    map[string]string
		users    []string
		names    []string
	}
	var all []*org
	var rows []map[string]any
	for _, o := range orgs {
		x := &org{id: id(), code: o.code, roles: map[string]string{}}
		all = append(all, x)
		rows = append(rows, map[string]any{"OrganizationIdentifier": x.id, "OrganizationCode": o.code, "OrganizationName": o.name})
	}
	if err := s.insert("Organization", rows); err != nil {
		return err
	}
	s.progress("organizations", len(rows))

	rows = nil
	for _, o := range all {
		for _, d := range departments {
			gid := id()
			o.depts = append(o.depts, gid)
			rows = append(rows, map[string]any{"GroupIdentifier": gid, "OrganizationIdentifier": o.id, "GroupName": d, "GroupType": "Department"})
		}
		for _, rg := range roleGrants {
			gid := id()
			o.roles[rg.role] = gid
			rows = append(rows, map[string]any{"GroupIdentifier": gid, "OrganizationIdentifier": o.id, "GroupName": rg.role, "GroupType": "Role"})
		}
	}
	if err := s.insert("Group", rows); err != nil {
		return err
	}
	s.progress("groups", len(rows))

	var users, people, addresses, fields, settings []map[string]any
	for i := range s.opts.People {
		o := all[i%len(all)]
		first, last := s.pick(firstNames), s.pick(lastNames)
		full := first + " " + last
		uid := id()
		email := fmt.Sprintf("%s.%s.%d@%s.example.com", strings.ToLower(asciiOnly(first)), strings.ToLower(asciiOnly(last)), i, strings.ToLower(o.code))
		o.users, o.names = append(o.users, uid), append(o.names, full)
		users = append(users, map[string]any{"UserIdentifier": uid, "Email": email, "FirstName": first, "LastName": last,
			"FullName": full, "Initials": first[:1] + last[:1], "TimeZone": "America/Edmonton", "PrimaryLoginMethod": 1,
			"UserLicenseAccepted": s.when(-float64(s.rng.IntN(700)))})
		home := id()
		c := cities[s.rng.IntN(len(cities))]
		addresses = append(addresses, map[string]any{"AddressIdentifier": home, "City": c.city, "Province": c.province,
			"Country": "Canada", "Street1": fmt.Sprintf("%d %s Street", 100+s.rng.IntN(9000), s.pick(lastNames)), "PostalCode": "T2P 1J9", "Description": "Home"})
		people = append(people, map[string]any{"PersonIdentifier": id(), "UserIdentifier": uid, "OrganizationIdentifier": o.id,
			"FullName": full, "PersonCode": fmt.Sprintf("%s-%05d", o.code, i), "JobTitle": s.pick(jobTitles), "IsLearner": true,
			"EmailEnabled": true, "EmployeeType": []string{"Employee", "Contractor"}[s.rng.IntN(2)], "HomeAddressIdentifier": home,
			"Language": "en", "Created": s.when(-float64(100 + s.rng.IntN(600))), "MemberStartDate": s.when(-float64(s.rng.IntN(900)))})
		settings = append(settings, map[string]any{"SettingIdentifier": id(), "OrganizationIdentifier": o.id, "UserIdentifier": uid,
			"Name": "Notifications", "ValueJson": `{"email":true}`, "ValueType": "Json"})
		fields = append(fields, map[string]any{"FieldIdentifier": id(), "OrganizationIdentifier": o.id, "UserIdentifier": uid,
			"FieldName": "Shirt size", "FieldValue": s.pick([]string{"S", "M", "L", "XL"}), "FieldSequence": 1})
	}
	for name, batch := range map[string][]map[string]any{"User": users, "PersonAddress": addresses} {
		if err := s.insert(name, batch); err != nil {
			return err
		}
	}
	if err := s.insert("Person", people); err != nil {
		return err
	}
	if err := s.insert("PersonField", fields); err != nil {
		return err
	}
	if err := s.insert("UserField", settings); err != nil {
		return err
	}
	s.progress("users and people", len(people))

	var memberships, reasons []map[string]any
	for _, o := range all {
		for i, uid := range o.users {
			dept := o.depts[i%len(o.depts)]
			function := []string{"Department", "Department", "Organization", "Administration"}[s.rng.IntN(4)]
			mid := id()
			memberships = append(memberships, map[string]any{"MembershipIdentifier": mid, "GroupIdentifier": dept,
				"OrganizationIdentifier": o.id, "UserIdentifier": uid, "MembershipFunction": function,
				"MembershipEffective": s.when(-float64(30 + s.rng.IntN(600)))})
			role := "Learners"
			switch {
			case i == 0:
				role = "Administrators"
			case i%10 == 1:
				role = "Instructors"
			}
			memberships = append(memberships, map[string]any{"MembershipIdentifier": id(), "GroupIdentifier": o.roles[role],
				"OrganizationIdentifier": o.id, "UserIdentifier": uid, "MembershipFunction": "Role",
				"MembershipEffective": s.when(-400)})
			if i%4 == 0 {
				reasons = append(reasons, map[string]any{"ReasonIdentifier": id(), "MembershipIdentifier": mid,
					"CreatedBy": o.users[0], "ModifiedBy": o.users[0], "ReasonType": "Hire", "ReasonSubtype": "New",
					"PersonOccupation": s.pick(jobTitles), "LastChangeType": "Created", "Created": s.when(-300),
					"Modified": s.when(-30), "ReasonEffective": s.when(-300), "ReasonExpiry": s.when(365)})
			}
		}
	}
	if err := s.insert("Membership", memberships); err != nil {
		return err
	}
	if err := s.insert("MembershipReason", reasons); err != nil {
		return err
	}
	s.progress("memberships", len(memberships))

	var perms []map[string]any
	for _, o := range all {
		for _, rg := range roleGrants {
			for _, path := range groupPaths {
				p := map[string]any{"PermissionIdentifier": id(), "GroupIdentifier": o.roles[rg.role],
					"ObjectIdentifier": auth.ObjectID(path).String(), "ObjectType": "Resource",
					"OrganizationIdentifier": o.id, "PermissionGranted": s.when(-200)}
				for _, f := range rg.flags {
					p["Allow"+f] = true
				}
				perms = append(perms, p)
			}
		}
	}
	if err := s.insert("Permission", perms); err != nil {
		return err
	}
	s.progress("permissions", len(perms))

	var comments, connections []map[string]any
	for _, o := range all {
		for i, uid := range o.users {
			if i%3 == 0 {
				comments = append(comments, map[string]any{"CommentIdentifier": id(), "CommentCreatedBy": o.users[0],
					"OrganizationIdentifier": o.id, "UserIdentifier": uid, "CommentText": "Completed orientation; " + s.pick(courses) + " next.",
					"CommentCreated": s.when(-float64(s.rng.IntN(90)))})
			}
			if i > 0 && i%5 != 0 {
				mgr := o.users[(i/5)*5]
				connections = append(connections, map[string]any{"FromUserIdentifier": mgr, "ToUserIdentifier": uid,
					"IsManager": true, "IsSupervisor": i%2 == 0, "Connected": s.when(-120)})
			}
		}
	}
	if err := s.insert("UserComment", comments); err != nil {
		return err
	}
	if err := s.insert("UserConnection", connections); err != nil {
		return err
	}
	s.progress("comments and connections", len(comments)+len(connections))

	if err := s.platform(); err != nil {
		return err
	}
	for _, o := range all {
		if err := s.progressData(o.id, o.users); err != nil {
			return err
		}
	}
	s.progress("achievements and gradebooks", s.sum["Gradebook"])
	for _, o := range all {
		if err := s.legacyData(o.id, o.code, o.users); err != nil {
			return err
		}
	}
	s.progress("venues, forms, registrations", s.sum["Registration"])
	return nil
}

// groupPaths are the API paths of the v2 groups the demo roles are granted on.
var groupPaths = []string{
	"security/users", "security/users-comments", "security/users-connections", "security/users-fields",
	"directory/people", "directory/people-addresses", "directory/people-fields", "directory/memberships",
	"directory/memberships-reasons", "directory/memberships-deletions", "progress/gradebooks", "progress/achievements",
	"platform/actions", "platform/partitions-fields",
}

func asciiOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && r != '\'' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
