package engine_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"credo/engine"
	"credo/handlers/request"
	"credo/internal/testenv"
	"credo/resources"
)

// The operation sets of api.md's Groups table, in engine.AllOps order (update brings patch).
var (
	opsAll      = []engine.Op{engine.OpGet, engine.OpExists, engine.OpUpdate, engine.OpPatch, engine.OpDelete, engine.OpCreate, engine.OpCount, engine.OpList, engine.OpSearch}
	opsRead     = []engine.Op{engine.OpGet, engine.OpExists, engine.OpCount, engine.OpList, engine.OpSearch}
	opsItemEdit = []engine.Op{engine.OpGet, engine.OpExists, engine.OpUpdate, engine.OpPatch, engine.OpDelete}
)

// apiGroups is api.md's Groups table with the per-group facts of decisions §6. Sort lists the
// default order ("Field" or "Field desc"); Scope lists the organization conditions as
// "Field", "Field via From.Remote:Field", or "any of " such links joined by " | ".
var apiGroups = []struct {
	Path   string
	Record string
	Ops    []engine.Op
	Key    []string
	Sort   []string
	Unique [][]string
	Scope  []string
}{
	{Path: "security/users-comments", Record: "UserComment", Ops: opsAll, Key: []string{"CommentIdentifier"}},
	{Path: "security/users-connections", Record: "UserConnection", Ops: opsRead,
		Key:  []string{"FromUserIdentifier", "ToUserIdentifier"},
		Sort: []string{"FromUserIdentifier", "ToUserIdentifier"},
		Scope: []string{
			"FromUserIdentifier via Person.UserIdentifier:OrganizationIdentifier",
			"ToUserIdentifier via Person.UserIdentifier:OrganizationIdentifier",
		}},
	{Path: "security/users", Record: "User", Ops: opsRead, Key: []string{"UserIdentifier"},
		Sort: []string{"FullName"}, Unique: [][]string{{"Email", "fold:ascii"}},
		Scope: []string{"UserIdentifier via Person.UserIdentifier:OrganizationIdentifier"}},
	{Path: "security/users-fields", Record: "UserField", Ops: opsAll, Key: []string{"SettingIdentifier"},
		Unique: [][]string{{"OrganizationIdentifier", "UserIdentifier", "Name", "ValueType"}}},
	{Path: "security/permissions", Record: "Permission", Ops: opsAll, Key: []string{"PermissionIdentifier"},
		Unique: [][]string{{"ObjectIdentifier", "GroupIdentifier"}}},
	{Path: "platform/actions", Record: "PlatformAction", Ops: opsAll, Key: []string{"ActionIdentifier"}},
	{Path: "platform/partitions-fields", Record: "PartitionField", Ops: opsAll, Key: []string{"SettingIdentifier"}},
	{Path: "directory/memberships", Record: "Membership", Ops: opsRead, Key: []string{"MembershipIdentifier"},
		Unique: [][]string{{"UserIdentifier", "GroupIdentifier"}}, Scope: []string{"OrganizationIdentifier"}},
	{Path: "directory/memberships-deletions", Record: "MembershipDeletion", Ops: opsRead, Key: []string{"DeletionIdentifier"},
		Scope: []string{"OrganizationIdentifier"}},
	{Path: "directory/memberships-reasons", Record: "MembershipReason", Ops: opsRead, Key: []string{"ReasonIdentifier"},
		Scope: []string{"MembershipIdentifier via Membership.MembershipIdentifier:OrganizationIdentifier"}},
	// decisions §6 names addresses in neither list: they are scoped by the people that refer
	// to them (docs/security.md, "Operators").
	{Path: "directory/people-addresses", Record: "PersonAddress", Ops: opsRead, Key: []string{"AddressIdentifier"},
		Scope: []string{"any of " +
			"AddressIdentifier via Person.BillingAddressIdentifier:OrganizationIdentifier | " +
			"AddressIdentifier via Person.HomeAddressIdentifier:OrganizationIdentifier | " +
			"AddressIdentifier via Person.ShippingAddressIdentifier:OrganizationIdentifier | " +
			"AddressIdentifier via Person.WorkAddressIdentifier:OrganizationIdentifier"}},
	{Path: "directory/people", Record: "Person", Ops: opsRead, Key: []string{"PersonIdentifier"},
		Sort:   []string{"FullName"},
		Unique: [][]string{{"UserIdentifier", "OrganizationIdentifier"}, {"OrganizationIdentifier", "PersonCode"}},
		Scope:  []string{"OrganizationIdentifier"}},
	{Path: "directory/people-fields", Record: "PersonField", Ops: opsItemEdit, Key: []string{"FieldIdentifier"}},
	{Path: "progress/gradebooks", Record: "Gradebook", Ops: opsRead, Key: []string{"GradebookIdentifier"},
		Sort: []string{"GradebookTitle"}, Scope: []string{"OrganizationIdentifier"}},
	{Path: "progress/achievements", Record: "Achievement", Ops: opsRead, Key: []string{"AchievementIdentifier"},
		Scope: []string{"OrganizationIdentifier"}},
}

// apiRecords copies the record shapes of api.md's "Version 2 resources": one "kind: names"
// line per row, in api.md's order; a kind ending in ? is nullable.
var apiRecords = map[string][]string{
	"UserComment": {"uuid: CommentIdentifier, CommentCreatedBy, OrganizationIdentifier, UserIdentifier",
		"string?: CommentText", "datetime: CommentCreated"},
	"UserConnection": {"uuid: FromUserIdentifier, ToUserIdentifier",
		"bool: IsLeader, IsManager, IsSupervisor, IsValidator", "datetime: Connected"},
	"User": {"uuid: UserIdentifier", "bool: AccessGrantedToCmds, MultiFactorAuthentication",
		"string: DefaultPassword, Email, EmailAlternate, EmailVerified, FirstName, FullName, Honorific, ImageUrl, Initials, LastName, LoginOrganizationCode, MiddleName, MultiFactorAuthenticationCode, OAuthProviderUserId, OldUserPasswordHash, PhoneMobile, SoundexFirstName, SoundexLastName, TimeZone, UserPasswordHash",
		"int: PrimaryLoginMethod, SecondaryLoginMethod, UserPasswordChangeRequested",
		"datetime: AccountCloaked, DefaultPasswordExpired, UserLicenseAccepted, UserPasswordChanged, UserPasswordExpired, UtcArchived, UtcUnarchived"},
	"UserField": {"uuid: SettingIdentifier, OrganizationIdentifier, UserIdentifier", "string?: Name, ValueJson, ValueType"},
	"Permission": {"uuid: PermissionIdentifier, GroupIdentifier, ObjectIdentifier, OrganizationIdentifier",
		"uuid?: PermissionGrantedBy",
		"bool: AllowAdministrate, AllowConfigure, AllowCreate, AllowDelete, AllowExecute, AllowRead, AllowTrialAccess, AllowWrite",
		"string?: ObjectType", "int: PermissionMask", "datetime?: PermissionGranted"},
	"PlatformAction": {"uuid: ActionIdentifier", "uuid?: NavigationParentActionIdentifier, PermissionParentActionIdentifier",
		"string?: ActionCategory, ActionIcon, ActionList, ActionName, ActionNameShort, ActionType, ActionUrl, AuthorizationRequirement, ControllerPath, HelpUrl"},
	"PartitionField": {"uuid: SettingIdentifier", "string?: SettingName, SettingValue"},
	"Membership": {"uuid: MembershipIdentifier, GroupIdentifier, OrganizationIdentifier, UserIdentifier",
		"string: MembershipFunction", "datetime: MembershipEffective, MembershipExpiry"},
	"MembershipDeletion": {"uuid: DeletionIdentifier, GroupIdentifier, MembershipIdentifier, OrganizationIdentifier, UserIdentifier",
		"datetime: DeletionWhen"},
	"MembershipReason": {"uuid: ReasonIdentifier, MembershipIdentifier, CreatedBy, ModifiedBy",
		"string: LastChangeType, PersonOccupation, ReasonSubtype, ReasonType",
		"datetime: Created, Modified, ReasonEffective, ReasonExpiry"},
	"PersonAddress": {"uuid: AddressIdentifier", "string: City, Country, Description, PostalCode, Province, Street1, Street2"},
	"Person": {"uuid: PersonIdentifier, UserIdentifier, OrganizationIdentifier, CreatedBy, ModifiedBy, BillingAddressIdentifier, HomeAddressIdentifier, ShippingAddressIdentifier, WorkAddressIdentifier, EmployerGroupIdentifier, IndustryItemIdentifier, MembershipStatusItemIdentifier, OccupationStandardIdentifier",
		"bool: CandidateIsActivelySeeking, CandidateIsWillingToRelocate, EmailAlternateEnabled, EmailEnabled, IsAdministrator, IsArchived, IsLearner, IsOperator, MarketingEmailEnabled",
		"string: AccessRevokedBy, AccountStatusName, CandidateLinkedInUrl, CandidateOccupationList, Citizenship, ConsentConsultation, ConsentToShare, CredentialingCountry, EducationLevel, EmergencyContactName, EmergencyContactPhone, EmergencyContactRelationship, EmployeeType, EmployeeUnion, FirstLanguage, FullName, Gender, ImmigrationApplicant, ImmigrationCategory, ImmigrationDestination, ImmigrationDisability, ImmigrationNumber, JobsApprovedBy, JobTitle, Language, PersonCode, Phone, PhoneFax, PhoneHome, PhoneOther, PhoneWork, Referrer, ReferrerOther, Region, ShippingPreference, SocialInsuranceNumber, TradeworkerNumber, UserAccessGrantedBy, UserApproveReason, WebSiteUrl",
		"int: CandidateCompletionProfilePercent, CandidateCompletionResumePercent, CustomKey, MembershipStatusItemKey, WelcomeEmailsSentToUser",
		"datetime: AccessRevoked, AccountReviewCompleted, AccountReviewQueued, Created, JobsApproved, LastAuthenticated, Modified, UserAccessGranted, WhenArchived, WhenUnarchived, Birthdate, ImmigrationLandingDate, MemberEndDate, MemberStartDate"},
	"PersonField": {"uuid: FieldIdentifier, OrganizationIdentifier, UserIdentifier", "string?: FieldName, FieldValue", "int?: FieldSequence"},
	"Gradebook": {"uuid: GradebookIdentifier, AchievementIdentifier, EventIdentifier, FrameworkIdentifier, OrganizationIdentifier, PeriodIdentifier",
		"bool: IsLocked", "string: GradebookTitle, GradebookType, LastChangeType, LastChangeUser, Reference",
		"datetime: GradebookCreated, LastChangeTime"},
	"Achievement": {"uuid: AchievementIdentifier, OrganizationIdentifier",
		"bool: AchievementIsEnabled, AchievementReportingDisabled, HasBadgeImage",
		"string: AchievementDescription, AchievementLabel, AchievementTitle, AchievementType, BadgeImageUrl, CertificateLayoutCode, ExpirationLifetimeUnit, ExpirationType",
		"int: ExpirationLifetimeQuantity", "datetime: ExpirationFixedDate"},
}

// apiOutputOnly are members of a record's output that are not stored (api.md: RoleSlug).
var apiOutputOnly = map[string][]string{"Permission": {"RoleSlug string?"}}

// writeOnlyFields are the secret-bearing members that decisions §7 makes write-only: stored,
// never output, filtered or sorted; hashedFields of them are stored only as argon2id hashes.
var (
	writeOnlyFields = map[string][]string{"User": {"DefaultPassword", "MultiFactorAuthenticationCode", "OldUserPasswordHash", "UserPasswordHash"}}
	hashedFields    = map[string][]string{"User": {"DefaultPassword", "MultiFactorAuthenticationCode"}}
)

// containsFields are the string fields matched by case-insensitive substring (decisions §5:
// titles, names, descriptions); every other string field matches exactly.
var containsFields = map[string][]string{
	"UserComment":      {"CommentText"},
	"User":             {"FirstName", "FullName", "LastName", "MiddleName"},
	"PlatformAction":   {"ActionName", "ActionNameShort"},
	"MembershipReason": {"PersonOccupation"},
	"PersonAddress":    {"City", "Description", "Street1", "Street2"},
	"Person":           {"EmergencyContactName", "FullName", "JobTitle"},
	"Gradebook":        {"GradebookTitle"},
	"Achievement":      {"AchievementDescription", "AchievementLabel", "AchievementTitle"},
}

// requiredFields are the relation ids that make no sense missing.
var requiredFields = map[string][]string{
	"UserComment":        {"CommentCreatedBy", "OrganizationIdentifier", "UserIdentifier"},
	"UserField":          {"UserIdentifier"},
	"Permission":         {"GroupIdentifier", "ObjectIdentifier"},
	"Membership":         {"GroupIdentifier", "OrganizationIdentifier", "UserIdentifier"},
	"MembershipDeletion": {"GroupIdentifier", "MembershipIdentifier", "OrganizationIdentifier", "UserIdentifier"},
	"MembershipReason":   {"MembershipIdentifier"},
	"Person":             {"UserIdentifier", "OrganizationIdentifier"},
	"Gradebook":          {"OrganizationIdentifier"},
	"Achievement":        {"OrganizationIdentifier"},
}

func loadGroups(t *testing.T) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestGroupsMatchAPI(t *testing.T) {
	reg := loadGroups(t)
	// Every group api.md describes is served; a maintainer's group beyond api.md (one more
	// descriptor under resources/, docs/descriptors.md) is not pinned here: the generic suites
	// that iterate over Registry.Public() cover it.
	for _, r := range reg.Public() {
		if !isAPIGroup(r) {
			t.Logf("%s: beyond api.md, not pinned", r.Path)
		}
	}
	for _, g := range apiGroups {
		t.Run(g.Path, func(t *testing.T) {
			r, ok := reg.ByName(g.Path)
			if !ok || r.Path != g.Path {
				t.Fatalf("no descriptor with path %s", g.Path)
			}
			if r.Name != g.Record {
				t.Errorf("record %s, want %s", r.Name, g.Record)
			}
			if got := r.Ops(); !sameSlice(got, g.Ops) {
				t.Errorf("operations %v, want %v", got, g.Ops)
			}
			if got := r.KeyNames(); !sameSlice(got, g.Key) {
				t.Errorf("key %v, want %v", got, g.Key)
			}
			wantSort := g.Sort
			if wantSort == nil {
				wantSort = g.Key
			}
			if got := sortNames(r.DefaultSort); !sameSlice(got, wantSort) {
				t.Errorf("default sort %v, want %v", got, wantSort)
			}
			if got := uniqueNames(r.Unique); fmt.Sprint(got) != fmt.Sprint(g.Unique) {
				t.Errorf("unique %v, want %v", got, g.Unique)
			}
			if got := scopeNames(r); !sameSlice(got, g.Scope) {
				t.Errorf("scope %v, want %v", got, g.Scope)
			}
			checkRecord(t, r)
		})
	}
}

// checkRecord compares r's stored fields and output with api.md's record shape, and pins
// match modes and required fields.
func checkRecord(t *testing.T, r *engine.Resource) {
	t.Helper()
	var want []string
	for _, line := range apiRecords[r.Name] {
		kind, names, _ := strings.Cut(line, ": ")
		for _, n := range strings.Split(names, ", ") {
			want = append(want, n+" "+kind)
		}
	}
	var got []string
	for _, f := range r.Fields {
		got = append(got, memberSig(f))
	}
	if !sameSlice(got, want) {
		t.Errorf("fields differ from api.md: %s", sliceDiff(got, want))
	}
	var gotOut []string
	for _, f := range r.Output {
		gotOut = append(gotOut, memberSig(f))
	}
	wantOut := slices.DeleteFunc(slices.Clone(want), func(sig string) bool {
		name, _, _ := strings.Cut(sig, " ")
		return slices.Contains(writeOnlyFields[r.Name], name)
	})
	if wantOut = slices.Concat(wantOut, apiOutputOnly[r.Name]); !sameSlice(gotOut, wantOut) {
		t.Errorf("output differs from api.md and decisions §7: %s", sliceDiff(gotOut, wantOut))
	}
	var contains, required, writeOnly, hashed []string
	for _, f := range r.Fields {
		if f.WriteOnly {
			writeOnly = append(writeOnly, f.Name)
		}
		if f.Hash == engine.HashArgon2id {
			hashed = append(hashed, f.Name)
		}
		if f.Match == engine.MatchContains {
			contains = append(contains, f.Name)
		}
		if f.Required {
			required = append(required, f.Name)
		}
		if f.Key && f.Required {
			t.Errorf("key field %s is required; keys get a new UUIDv7", f.Name)
		}
	}
	if !sameSlice(contains, containsFields[r.Name]) {
		t.Errorf("contains fields %v, want %v", contains, containsFields[r.Name])
	}
	if !sameSlice(required, requiredFields[r.Name]) {
		t.Errorf("required fields %v, want %v", required, requiredFields[r.Name])
	}
	if !sameSlice(writeOnly, writeOnlyFields[r.Name]) || !sameSlice(hashed, hashedFields[r.Name]) {
		t.Errorf("write-only fields %v hashed %v, want %v and %v", writeOnly, hashed, writeOnlyFields[r.Name], hashedFields[r.Name])
	}
}

// TestGroupFilters pins the filter parameters: every stored non-key field by default, and
// api.md's explicit sets for users-connections, people, permissions and gradebooks.
func TestGroupFilters(t *testing.T) {
	reg := loadGroups(t)
	allBut := func(r *engine.Resource, except ...string) []string {
		var out []string
		for _, f := range r.Fields {
			if !f.Key && !slices.Contains(except, f.Name) {
				out = append(out, f.Name)
			}
		}
		return out
	}
	for _, g := range apiGroups {
		if g.Path == "progress/gradebooks" {
			continue // TestGradebook pins the gradebook filters
		}
		t.Run(g.Path, func(t *testing.T) {
			r := reg.MustByName(g.Path)
			var want []string
			switch g.Path {
			case "security/users-connections":
				want = []string{"IsManager", "IsSupervisor", "IsValidator", "Connected"}
			case "directory/people":
				want = allBut(r, "EmployeeType")
			case "security/permissions":
				want = allBut(r) // RoleSlug is computed, so never a per-field filter
			case "security/users":
				want = allBut(r, writeOnlyFields["User"]...) // decisions §7: never filters
			default:
				want = allBut(r)
			}
			if got := groupFilterNames(r); !sameSlice(got, want) {
				t.Errorf("filters differ from api.md: %s", sliceDiff(got, want))
			}
			for _, f := range r.Filters {
				if f.Field.Stored() && f.Op != f.Field.Match {
					t.Errorf("filter %s compares by %s, its field by %s", f.Param, f.Op, f.Field.Match)
				}
			}
		})
	}
	perm := reg.MustByName("Permission")
	if _, ok := perm.Filter("RoleSlug"); ok {
		t.Error("permissions filter on RoleSlug; api.md excludes it")
	}
	if f, _ := perm.Member("PermissionMask"); f == nil || !f.ReadOnly {
		t.Error("PermissionMask must be readOnly: the permission-mask hook derives it")
	}
}

// TestGradebook pins api.md's gradebook filters (names, types and comparisons) and the
// GradebookSummary projection of its search.
func TestGradebook(t *testing.T) {
	r := loadGroups(t).MustByName("progress/gradebooks")
	wantFilters := map[string]string{
		"AchievementIdentifier": "uuid eq", "ClassIdentifier": "uuid eq", "ClassInstructorIdentifier": "uuid eq",
		"FrameworkIdentifier": "uuid eq", "OrganizationIdentifier": "uuid eq", "PeriodIdentifier": "uuid eq",
		"IsLocked":   "bool eq",
		"ClassTitle": "string contains", "GradebookTitle": "string contains", "GradebookType": "string eq",
		"LastChangeType": "string eq", "LastChangeUser": "string eq", "Reference": "string eq",
		"ClassStartedSince": "datetime gte", "ClassStartedBefore": "datetime lt",
		"GradebookCreatedSince": "datetime gte", "GradebookCreatedBefore": "datetime lt",
		"LastChangeSince": "datetime gte", "LastChangeBefore": "datetime lt",
	}
	got := map[string]string{}
	for _, f := range r.Filters {
		got[f.Param] = fmt.Sprintf("%s %s", f.Field.Type, f.Op)
	}
	if fmt.Sprint(got) != fmt.Sprint(wantFilters) {
		t.Errorf("filters\n got %v\nwant %v", got, wantFilters)
	}
	wantSearch := []string{"GradebookIdentifier uuid", "GradebookTitle string", "GradebookCreated datetime",
		"GradebookEnrollmentCount int", "ClassIdentifier uuid?", "ClassTitle string?", "ClassStarted datetime?",
		"ClassEnded datetime?", "AchievementIdentifier uuid", "AchievementTitle string?", "AchievementCountGranted int"}
	var search []string
	for _, f := range r.SearchFields {
		search = append(search, memberSig(f))
	}
	if !sameSlice(search, wantSearch) {
		t.Errorf("search\n got %v\nwant %v", search, wantSearch)
	}
}

// TestStandardSearch pins the reduced search record of every other group: its key alone.
func TestStandardSearch(t *testing.T) {
	reg := loadGroups(t)
	for _, g := range apiGroups {
		r := reg.MustByName(g.Path)
		if r.Name == "Gradebook" {
			continue
		}
		var got []string
		for _, f := range r.SearchFields {
			got = append(got, f.Name)
		}
		if !sameSlice(got, g.Key) {
			t.Errorf("%s: search %v, want the key %v", g.Path, got, g.Key)
		}
	}
}

// TestGroupsOnStores migrates every descriptor on SQLite and PostgreSQL, runs count, list and
// search of every group with and without an organization scope, and checks the behaviour the
// descriptors declare: gradebook summary and class filters, scopes through Person and
// Membership, the permission hooks and the membership-deletion hook.
func TestGroupsOnStores(t *testing.T) {
	reg := loadGroups(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			p := testenv.Partition(t)
			db, err := engine.Open(ctx, b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := db.Store(p)
			t.Cleanup(func() {
				if s.Dialect() == engine.Postgres {
					s.DB(ctx).Exec(`DROP SCHEMA "` + p + `" CASCADE`)
				}
				db.Close()
			})
			for _, r := range reg.Public() {
				for _, org := range []engine.Scope{engine.AllOrganizations(), engine.Organization(orgA)} {
					if n := groupCount(t, s, r, org); n != 0 {
						t.Errorf("%s: count %d in an empty partition", r.Path, n)
					}
					groupList(t, s, r, request.KindList, org)
					groupList(t, s, r, request.KindSearch, org)
				}
			}
			seedGroups(t, s)
			gradebooks := reg.MustByName("Gradebook")
			want := `{"GradebookIdentifier":"` + gradebookG1 + `","GradebookTitle":"Spring welding",` +
				`"GradebookCreated":"2024-01-05T09:00:00+00:00","GradebookEnrollmentCount":2,` +
				`"ClassIdentifier":"` + eventE1 + `","ClassTitle":"Welding Basics",` +
				`"ClassStarted":"2024-03-10T14:30:00-05:00","ClassEnded":"2024-03-10T18:00:00-05:00",` +
				`"AchievementIdentifier":"` + achievementA1 + `","AchievementTitle":"Welder Level 1","AchievementCountGranted":3}`
			if got := groupList(t, s, gradebooks, request.KindSearch, engine.Organization(orgA), "Identifier", gradebookG1); len(got) != 1 || got[0] != want {
				t.Errorf("gradebook search %v\nwant %s", got, want)
			}
			for _, tt := range []struct {
				scope  engine.Scope
				params []string
				want   int
			}{
				{scope: engine.Organization(orgA), want: 2},
				{scope: engine.Organization(orgB), want: 0},
				{scope: engine.Organization(orgA), params: []string{"ClassIdentifier", eventE1}, want: 1},
				{scope: engine.Organization(orgA), params: []string{"ClassInstructorIdentifier", instructor2}, want: 1},
				{scope: engine.Organization(orgA), params: []string{"ClassTitle", "WELD"}, want: 1},
				{scope: engine.Organization(orgA), params: []string{"ClassStartedSince", "2024-03-10T19:30:00Z"}, want: 1},
				{scope: engine.Organization(orgA), params: []string{"ClassStartedBefore", "2024-03-10T19:30:00Z"}, want: 0},
				{scope: engine.Organization(orgA), params: []string{"GradebookCreatedBefore", "2024-01-05T09:00:00Z"}, want: 0},
			} {
				if got := len(groupList(t, s, gradebooks, request.KindSearch, tt.scope, tt.params...)); got != tt.want {
					t.Errorf("gradebooks org %s %v: %d, want %d", tt.scope, tt.params, got, tt.want)
				}
			}
			if got := groupList(t, s, gradebooks, request.KindSearch, engine.Organization(orgA), "Includes", "GradebookTitle"); fmt.Sprint(got) != `[{"GradebookTitle":"Autumn"} {"GradebookTitle":"Spring welding"}]` {
				t.Errorf("gradebooks by default sort: %v", got)
			}
			for _, tt := range []struct {
				name  string
				scope engine.Scope
				want  int
			}{
				{name: "User", scope: engine.Organization(orgA), want: 2},
				{name: "User", scope: engine.Organization(orgB), want: 1},
				{name: "User", scope: engine.AllOrganizations(), want: 2},
				{name: "UserConnection", scope: engine.Organization(orgA), want: 1},
				{name: "UserConnection", scope: engine.Organization(orgB), want: 0},
				{name: "MembershipReason", scope: engine.Organization(orgA), want: 1},
				{name: "MembershipReason", scope: engine.Organization(orgB), want: 0},
			} {
				if got := groupCount(t, s, reg.MustByName(tt.name), tt.scope); got != int64(tt.want) {
					t.Errorf("%s in org %q: %d, want %d", tt.name, tt.scope, got, tt.want)
				}
			}
			permissions := reg.MustByName("Permission")
			rec := seedCreate(t, s, "Permission", `{"GroupIdentifier":"`+groupG1+`","ObjectIdentifier":"`+orgB+`","AllowRead":true,"AllowWrite":true,"AllowTrialAccess":true,"PermissionMask":999}`)
			got, err := s.Get(ctx, permissions, []any{rec.Get(permissions, "PermissionIdentifier")}, nil, engine.AllOrganizations())
			if err != nil {
				t.Fatal(err)
			}
			if mask, slug := got.Get(permissions, "PermissionMask"), got.Get(permissions, "RoleSlug"); mask != int64(6) || slug != "course-admins" {
				t.Errorf("permission mask %v slug %v, want 6 course-admins", mask, slug)
			}
			memberships := reg.MustByName("Membership")
			if err := s.Delete(ctx, memberships, []any{membershipM1}, engine.Organization(orgA)); err != nil {
				t.Fatal(err)
			}
			if got := groupList(t, s, reg.MustByName("MembershipDeletion"), request.KindList, engine.Organization(orgA), "MembershipIdentifier", membershipM1, "Excludes", "DeletionIdentifier,DeletionWhen"); len(got) != 1 ||
				got[0] != `{"GroupIdentifier":"`+groupG1+`","MembershipIdentifier":"`+membershipM1+`","OrganizationIdentifier":"`+orgA+`","UserIdentifier":"`+userU1+`"}` {
				t.Errorf("membership deletions %v", got)
			}
		})
	}
}

// Identifiers of the records seed writes.
const (
	orgA          = "0190a6f0-0000-7000-8000-00000000000a"
	orgB          = "0190a6f0-0000-7000-8000-00000000000b"
	userU1        = "0190a6f0-0000-7000-8000-000000000101"
	userU2        = "0190a6f0-0000-7000-8000-000000000102"
	eventE1       = "0190a6f0-0000-7000-8000-000000000201"
	instructor2   = "0190a6f0-0000-7000-8000-000000000302"
	achievementA1 = "0190a6f0-0000-7000-8000-000000000401"
	gradebookG1   = "0190a6f0-0000-7000-8000-000000000501"
	groupG1       = "0190a6f0-0000-7000-8000-000000000601"
	membershipM1  = "0190a6f0-0000-7000-8000-000000000701"
)

// seedGroups writes two gradebooks of organization A (one with a class, an achievement, two
// enrollments and three credentials), users U1 (a person in A) and U2 (persons in A and B)
// connected U1→U2, and a membership of U1 with one reason.
func seedGroups(t *testing.T, s *engine.Store) {
	t.Helper()
	seedCreate(t, s, "Event", `{"EventIdentifier":"`+eventE1+`","OrganizationIdentifier":"`+orgA+`","EventTitle":"Welding Basics","EventStart":"2024-03-10T14:30:00-05:00","EventEnd":"2024-03-10T18:00:00-05:00"}`)
	seedCreate(t, s, "EventInstructor", `{"EventIdentifier":"`+eventE1+`","InstructorIdentifier":"0190a6f0-0000-7000-8000-000000000301"}`)
	seedCreate(t, s, "EventInstructor", `{"EventIdentifier":"`+eventE1+`","InstructorIdentifier":"`+instructor2+`"}`)
	seedCreate(t, s, "Achievement", `{"AchievementIdentifier":"`+achievementA1+`","OrganizationIdentifier":"`+orgA+`","AchievementTitle":"Welder Level 1"}`)
	seedCreate(t, s, "Gradebook", `{"GradebookIdentifier":"`+gradebookG1+`","OrganizationIdentifier":"`+orgA+`","EventIdentifier":"`+eventE1+`","AchievementIdentifier":"`+achievementA1+`","GradebookTitle":"Spring welding","GradebookCreated":"2024-01-05T09:00:00Z"}`)
	seedCreate(t, s, "Gradebook", `{"OrganizationIdentifier":"`+orgA+`","GradebookTitle":"Autumn"}`)
	for _, u := range []string{userU1, userU2} {
		seedCreate(t, s, "Enrollment", `{"GradebookIdentifier":"`+gradebookG1+`","UserIdentifier":"`+u+`"}`)
	}
	for range 3 {
		seedCreate(t, s, "Credential", `{"AchievementIdentifier":"`+achievementA1+`","UserIdentifier":"`+userU1+`","CredentialGranted":"2024-04-01T00:00:00Z"}`)
	}
	seedCreate(t, s, "User", `{"UserIdentifier":"`+userU1+`","Email":"u1@example.com","FullName":"User One"}`)
	seedCreate(t, s, "User", `{"UserIdentifier":"`+userU2+`","Email":"u2@example.com","FullName":"User Two"}`)
	seedCreate(t, s, "Person", `{"UserIdentifier":"`+userU1+`","OrganizationIdentifier":"`+orgA+`","PersonCode":"P1"}`)
	seedCreate(t, s, "Person", `{"UserIdentifier":"`+userU2+`","OrganizationIdentifier":"`+orgA+`","PersonCode":"P2"}`)
	seedCreate(t, s, "Person", `{"UserIdentifier":"`+userU2+`","OrganizationIdentifier":"`+orgB+`","PersonCode":"P2"}`)
	seedCreate(t, s, "UserConnection", `{"FromUserIdentifier":"`+userU1+`","ToUserIdentifier":"`+userU2+`","IsManager":true}`)
	seedCreate(t, s, "Group", `{"GroupIdentifier":"`+groupG1+`","OrganizationIdentifier":"`+orgA+`","GroupName":"Course Admins"}`)
	seedCreate(t, s, "Membership", `{"MembershipIdentifier":"`+membershipM1+`","GroupIdentifier":"`+groupG1+`","OrganizationIdentifier":"`+orgA+`","UserIdentifier":"`+userU1+`"}`)
	seedCreate(t, s, "MembershipReason", `{"MembershipIdentifier":"`+membershipM1+`","ReasonType":"Hired"}`)
}

func seedCreate(t *testing.T, s *engine.Store, name, body string) engine.Record {
	t.Helper()
	rec, err := testenv.CreateJSON(context.Background(), s, s.Registry().MustByName(name), []byte(body), engine.AllOrganizations())
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return rec
}

func groupQuery(t *testing.T, r *engine.Resource, kind request.Kind, params []string) engine.Query {
	t.Helper()
	v := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		v.Set(params[i], params[i+1])
	}
	q, err := request.ListQuery(r, v, kind)
	if err != nil {
		t.Fatalf("%s %v: %v", r.Name, params, err)
	}
	return q
}

func groupCount(t *testing.T, s *engine.Store, r *engine.Resource, scope engine.Scope) int64 {
	t.Helper()
	n, err := s.Count(context.Background(), r, groupQuery(t, r, request.KindCount, nil), scope)
	if err != nil {
		t.Fatalf("count %s: %v", r.Name, err)
	}
	return n
}

// groupList runs a list or search and returns its records as JSON objects.
func groupList(t *testing.T, s *engine.Store, r *engine.Resource, kind request.Kind, scope engine.Scope, params ...string) []string {
	t.Helper()
	q := groupQuery(t, r, kind, params)
	recs, _, err := s.List(context.Background(), r, q, scope)
	if err != nil {
		t.Fatalf("list %s %v: %v", r.Name, params, err)
	}
	var out []string
	for _, rec := range recs {
		out = append(out, string(engine.AppendJSON(nil, rec, q.Fields)))
	}
	return out
}

func memberSig(f *engine.Field) string {
	s := f.Name + " " + string(f.Type)
	if f.Nullable {
		s += "?"
	}
	return s
}

func sortNames(terms []engine.SortTerm) []string {
	var out []string
	for _, t := range terms {
		s := t.Field.Name
		if t.Desc {
			s += " desc"
		}
		out = append(out, s)
	}
	return out
}

// uniqueNames lists each constraint's fields, then "fold:<fold>" when it folds case.
func uniqueNames(us []engine.Unique) [][]string {
	var out [][]string
	for _, u := range us {
		var names []string
		for _, f := range u.Fields {
			names = append(names, f.Name)
		}
		if u.Fold != engine.FoldNone {
			names = append(names, "fold:"+string(u.Fold))
		}
		out = append(out, names)
	}
	return out
}

func scopeNames(r *engine.Resource) []string {
	via := func(v *engine.Computed) string {
		return fmt.Sprintf(" via %s.%s:%s", v.From.Name, v.Remote.Name, v.Field.Name)
	}
	var out []string
	for _, sc := range r.Scope {
		if sc.Any != nil {
			var links []string
			for _, v := range sc.Any {
				links = append(links, v.Local.Name+via(v))
			}
			out = append(out, "any of "+strings.Join(links, " | "))
			continue
		}
		s := sc.Field.Name
		if v := sc.Via; v != nil {
			if v.Local != sc.Field {
				s += " (local " + v.Local.Name + ")"
			}
			s += via(v)
		}
		out = append(out, s)
	}
	return out
}

func groupFilterNames(r *engine.Resource) []string {
	var out []string
	for _, f := range r.Filters {
		out = append(out, f.Param)
	}
	return out
}

// sliceDiff describes how got differs from want: the members missing and unexpected, or else the
// first position where the order differs.
func sliceDiff(got, want []string) string {
	var missing, extra []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	if len(missing)+len(extra) > 0 {
		return fmt.Sprintf("missing %v, unexpected %v", missing, extra)
	}
	for i := range got {
		if i >= len(want) || got[i] != want[i] {
			return fmt.Sprintf("order differs at %d: got %v", i, got[i:])
		}
	}
	return fmt.Sprintf("got %d members, want %d", len(got), len(want))
}

// sameSlice compares two slices, treating nil and empty as the same.
func sameSlice[T comparable](a, b []T) bool { return slices.Equal(a, b) }

// isAPIGroup reports whether r is one of the groups api.md describes (apiGroups).
func isAPIGroup(r *engine.Resource) bool {
	for _, g := range apiGroups {
		if g.Path == r.Path {
			return true
		}
	}
	return false
}
