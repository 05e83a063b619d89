package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"credo/engine"
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
// "Field" or "Field via From.Remote:Field".
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
		Sort: []string{"FullName"}, Unique: [][]string{{"Email"}},
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
	{Path: "directory/people-addresses", Record: "PersonAddress", Ops: opsRead, Key: []string{"AddressIdentifier"}},
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
	"PersonField":        {"UserIdentifier"},
	"Gradebook":          {"OrganizationIdentifier"},
	"Achievement":        {"OrganizationIdentifier"},
}

func loadResources(t *testing.T) *engine.Registry {
	t.Helper()
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestGroupsMatchAPI(t *testing.T) {
	reg := loadResources(t)
	var paths []string
	for _, r := range reg.Public() {
		paths = append(paths, r.Path)
	}
	var want []string
	for _, g := range apiGroups {
		want = append(want, g.Path)
	}
	slices.Sort(want)
	if !equal(paths, want) {
		t.Errorf("public groups %v\nwant api.md's %v", paths, want)
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
			if got := r.Ops(); !equal(got, g.Ops) {
				t.Errorf("operations %v, want %v", got, g.Ops)
			}
			if got := r.KeyNames(); !equal(got, g.Key) {
				t.Errorf("key %v, want %v", got, g.Key)
			}
			wantSort := g.Sort
			if wantSort == nil {
				wantSort = g.Key
			}
			if got := sortNames(r.DefaultSort); !equal(got, wantSort) {
				t.Errorf("default sort %v, want %v", got, wantSort)
			}
			if got := fieldLists(r.Unique); fmt.Sprint(got) != fmt.Sprint(g.Unique) {
				t.Errorf("unique %v, want %v", got, g.Unique)
			}
			if got := scopeNames(r); !equal(got, g.Scope) {
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
	if !equal(got, want) {
		t.Errorf("fields\n got %v\nwant %v", got, want)
	}
	var gotOut []string
	for _, f := range r.Output {
		gotOut = append(gotOut, memberSig(f))
	}
	if wantOut := append(want, apiOutputOnly[r.Name]...); !equal(gotOut, wantOut) {
		t.Errorf("output\n got %v\nwant %v", gotOut, wantOut)
	}
	var contains, required []string
	for _, f := range r.Fields {
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
	if !equal(contains, containsFields[r.Name]) {
		t.Errorf("contains fields %v, want %v", contains, containsFields[r.Name])
	}
	if !equal(required, requiredFields[r.Name]) {
		t.Errorf("required fields %v, want %v", required, requiredFields[r.Name])
	}
}

// TestGroupFilters pins the filter parameters: every stored non-key field by default, and
// api.md's explicit sets for users-connections, people, permissions and gradebooks.
func TestGroupFilters(t *testing.T) {
	reg := loadResources(t)
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
			case "progress/gradebooks":
				t.Skip("TestGradebook pins the gradebook filters")
			default:
				want = allBut(r)
			}
			if got := filterNames(r); !equal(got, want) {
				t.Errorf("filters\n got %v\nwant %v", got, want)
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
	r := loadResources(t).MustByName("progress/gradebooks")
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
	if !equal(search, wantSearch) {
		t.Errorf("search\n got %v\nwant %v", search, wantSearch)
	}
}

// TestStandardSearch pins the reduced search record of every other group: its key alone.
func TestStandardSearch(t *testing.T) {
	reg := loadResources(t)
	for _, g := range apiGroups {
		r := reg.MustByName(g.Path)
		if r.Name == "Gradebook" {
			continue
		}
		var got []string
		for _, f := range r.SearchFields {
			got = append(got, f.Name)
		}
		if !equal(got, g.Key) {
			t.Errorf("%s: search %v, want the key %v", g.Path, got, g.Key)
		}
	}
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

func fieldLists(lists [][]*engine.Field) [][]string {
	var out [][]string
	for _, l := range lists {
		var names []string
		for _, f := range l {
			names = append(names, f.Name)
		}
		out = append(out, names)
	}
	return out
}

func scopeNames(r *engine.Resource) []string {
	var out []string
	for _, sc := range r.Scope {
		s := sc.Field.Name
		if v := sc.Via; v != nil {
			if v.Local != sc.Field {
				s += " (local " + v.Local.Name + ")"
			}
			s += fmt.Sprintf(" via %s.%s:%s", v.From.Name, v.Remote.Name, v.Field.Name)
		}
		out = append(out, s)
	}
	return out
}

func filterNames(r *engine.Resource) []string {
	var out []string
	for _, f := range r.Filters {
		out = append(out, f.Param)
	}
	return out
}

// equal compares two slices, treating nil and empty as the same.
func equal[T comparable](a, b []T) bool { return slices.Equal(a, b) }
