package seed

import "fmt"

// platform seeds a navigation tree of platform actions and a few partition settings.
func (s *seeder) platform() error {
	type node struct{ name, short, url, parent string }
	tree := []node{
		{"Home", "Home", "home", ""},
		{"Directory", "Directory", "directory", "home"},
		{"People", "People", "directory/people", "directory"},
		{"Person Profile", "Profile", "directory/people/profile", "directory/people"},
		{"Memberships", "Memberships", "directory/memberships", "directory"},
		{"Progress", "Progress", "progress", "home"},
		{"Gradebooks", "Gradebooks", "progress/gradebooks", "progress"},
		{"Achievements", "Achievements", "progress/achievements", "progress"},
		{"Exam Events", "Events", "events", "home"},
		{"Platform Settings", "Settings", "admin/settings", "home"},
	}
	ids := map[string]string{}
	var rows []map[string]any
	for _, n := range tree {
		ids[n.url] = id()
		row := map[string]any{"ActionIdentifier": ids[n.url], "ActionName": n.name, "ActionNameShort": n.short,
			"ActionUrl": n.url, "ActionType": "Page", "ActionCategory": "Navigation", "ControllerPath": "/ui/" + n.url,
			"HelpUrl": "https://help.example.com/" + n.url}
		if n.parent != "" {
			row["NavigationParentActionIdentifier"] = ids[n.parent]
			row["PermissionParentActionIdentifier"] = ids[n.parent]
		}
		if n.url == "admin/settings" {
			row["AuthorizationRequirement"] = "Operator"
		}
		rows = append(rows, row)
	}
	if err := s.insert("PlatformAction", rows); err != nil {
		return err
	}
	settings := []map[string]any{
		{"SettingIdentifier": id(), "SettingName": "Environment.Name", "SettingValue": "Demo"},
		{"SettingIdentifier": id(), "SettingName": "Support.Email", "SettingValue": "support@example.com"},
		{"SettingIdentifier": id(), "SettingName": "Registration.DefaultTimeLimit", "SettingValue": "120"},
	}
	if err := s.insert("PartitionField", settings); err != nil {
		return err
	}
	s.progress("platform actions and settings", len(rows)+len(settings))
	return nil
}

// progressData seeds one organization's achievements, classes (events), gradebooks,
// enrollments and credentials.
func (s *seeder) progressData(org string, users []string) error {
	var achievements, events, instructors, gradebooks, enrollments, credentials []map[string]any
	achIDs := make([]string, len(courses))
	for i, c := range courses {
		achIDs[i] = id()
		exp := []string{"None", "Fixed", "Relative"}[i%3]
		a := map[string]any{"AchievementIdentifier": achIDs[i], "OrganizationIdentifier": org, "AchievementTitle": c,
			"AchievementLabel": "Certificate", "AchievementType": "Certificate", "AchievementIsEnabled": true,
			"AchievementDescription": "Successful completion of " + c + ".", "ExpirationType": exp, "CertificateLayoutCode": "STANDARD"}
		if exp == "Relative" {
			a["ExpirationLifetimeQuantity"], a["ExpirationLifetimeUnit"] = 3, "Years"
		}
		if exp == "Fixed" {
			a["ExpirationFixedDate"] = s.when(365)
		}
		achievements = append(achievements, a)
	}
	for i := 0; i < 3*len(courses); i++ {
		c := i % len(courses)
		ev, gb := id(), id()
		start := float64(i*7 - 60)
		events = append(events, map[string]any{"EventIdentifier": ev, "OrganizationIdentifier": org, "EventNumber": 1000 + i,
			"EventTitle": fmt.Sprintf("%s — cohort %d", courses[c], i/len(courses)+1), "EventType": "Class",
			"EventStart": s.when(start), "EventEnd": s.when(start + 2)})
		instructors = append(instructors, map[string]any{"EventIdentifier": ev, "InstructorIdentifier": users[(i*10+1)%len(users)]})
		gradebooks = append(gradebooks, map[string]any{"GradebookIdentifier": gb, "OrganizationIdentifier": org,
			"AchievementIdentifier": achIDs[c], "EventIdentifier": ev, "GradebookTitle": fmt.Sprintf("%s %d", courses[c], i/len(courses)+1),
			"GradebookType": []string{"Scores", "Standards", "ScoresAndStandards"}[i%3], "IsLocked": start < -30,
			"GradebookCreated": s.when(start - 10), "LastChangeTime": s.when(start + 1), "LastChangeType": "Updated",
			"Reference": fmt.Sprintf("GB-%04d", i)})
		for k := 0; k < 8; k++ {
			u := users[(i*8+k)%len(users)]
			enrollments = append(enrollments, map[string]any{"EnrollmentIdentifier": id(), "GradebookIdentifier": gb,
				"UserIdentifier": u, "OrganizationIdentifier": org, "EnrollmentStarted": s.when(start)})
			if start < 0 && k%3 != 0 {
				credentials = append(credentials, map[string]any{"CredentialIdentifier": id(), "AchievementIdentifier": achIDs[c],
					"UserIdentifier": u, "OrganizationIdentifier": org, "CredentialGranted": s.when(start + 2), "CredentialStatus": "Granted"})
			}
		}
	}
	for _, step := range []struct {
		name string
		rows []map[string]any
	}{{"Achievement", achievements}, {"Event", events}, {"EventInstructor", instructors}, {"Gradebook", gradebooks},
		{"Enrollment", enrollments}, {"Credential", credentials}} {
		if err := s.insert(step.name, step.rows); err != nil {
			return err
		}
	}
	return nil
}

// legacyData seeds one organization's version-1 data: venues, billing codes, assessment forms,
// exam events and registrations.
func (s *seeder) legacyData(org, code string, users []string) error {
	venues := []map[string]any{
		{"VenueIdentifier": id(), "OrganizationIdentifier": org, "VenueName": code + " Testing Centre", "VenueAddress": "1 Main Street"},
		{"VenueIdentifier": id(), "OrganizationIdentifier": org, "VenueName": code + " Field Office", "VenueAddress": "200 Industrial Way"},
	}
	codes := []map[string]any{
		{"OrganizationIdentifier": org, "BillingCode": "STD", "BillingCodeDescription": "Standard"},
		{"OrganizationIdentifier": org, "BillingCode": "GOV", "BillingCodeDescription": "Government funded"},
	}
	var forms []map[string]any
	formIDs := map[string]string{}
	for i, f := range []struct {
		code, title string
		published   bool
		limit       int
	}{{"SAFE-101", "Safety Fundamentals", true, 90}, {"SAFE-101", "Safety Fundamentals Bilingual", true, 120},
		{"RIG-200", "Rigging Level 2", true, 120}, {"DRAFT-1", "Draft Exam", false, 60}} {
		fid := id()
		if i == 0 {
			formIDs[f.code] = fid
		}
		forms = append(forms, map[string]any{"FormIdentifier": fid, "OrganizationIdentifier": org, "FormCode": f.code,
			"FormName": f.code, "FormTitle": f.title, "FormPublished": f.published, "FormTimeLimit": f.limit})
	}
	var events, regs []map[string]any
	for i := 0; i < 4; i++ {
		ev := id()
		events = append(events, map[string]any{"EventIdentifier": ev, "OrganizationIdentifier": org, "EventNumber": 5000 + i,
			"EventTitle": "Exam sitting", "EventType": "Exam", "EventVenue": venues[i%2]["VenueIdentifier"],
			"EventStart": s.when(float64(7 + i*7)), "EventExamType": "Sitting", "EventExamFormat": []string{"Online", "Paper"}[i%2],
			"EventBillingCode": "STD", "RegistrationLimit": 30})
		for k := 0; k < 5; k++ {
			regs = append(regs, map[string]any{"RegistrationIdentifier": id(), "OrganizationIdentifier": org, "EventIdentifier": ev,
				"LearnerIdentifier": users[(i*5+k)%len(users)], "FormIdentifier": formIDs["SAFE-101"], "RegistrantType": "Individual",
				"AttendanceStatus": "Registered", "TimeLimit": 90, "LastChangeTime": s.when(-float64(k)), "LastChangeType": "Registered"})
		}
	}
	for _, step := range []struct {
		name string
		rows []map[string]any
	}{{"Venue", venues}, {"BillingCode", codes}, {"AssessmentForm", forms}, {"Event", events}, {"Registration", regs}} {
		if err := s.insert(step.name, step.rows); err != nil {
			return err
		}
	}
	return nil
}
