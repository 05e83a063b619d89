package compliance

// LearnerType is the Type of every summary's Learner member.
const LearnerType = "Learner"

// Summary is one element of the compliance-summaries result (api.md ComplianceSummary): the
// counts of one learner in one department for one measurement. Every member is present, null
// where null (decisions §3).
type Summary struct {
	// Department is the group of the row: GroupIdentifier, GroupType, GroupName, GroupSlug
	// (the slug of GroupName when none is stored), GroupDescription. Only Identifier is set when
	// the group no longer exists.
	Department Member `json:"Department"`
	// Learner is the user: Identifier is the UserIdentifier, Type LearnerType, Name the FullName
	// of the user's person in the row's organization, Slug the slug of that name, Description
	// null. Name and Slug are null when the user has no person there.
	Learner Member `json:"Learner"`
	// PrimaryProfile is the learner's primary profile in the organization, or null.
	PrimaryProfile *Member     `json:"PrimaryProfile"`
	Measurement    Measurement `json:"Measurement"`
}

// Member is a Department, Learner or PrimaryProfile.
type Member struct {
	Identifier  string  `json:"Identifier"`
	Type        *string `json:"Type"`
	Name        *string `json:"Name"`
	Slug        *string `json:"Slug"`
	Description *string `json:"Description"`
}

// Measurement carries the status counts of one measurement key and its Score (see Score).
type Measurement struct {
	Key           int      `json:"Key"`
	Name          string   `json:"Name"`
	Score         *float64 `json:"Score"`
	Required      int64    `json:"Required"`
	Satisfied     int64    `json:"Satisfied"`
	Expired       int64    `json:"Expired"`
	NotCompleted  int64    `json:"NotCompleted"`
	NotApplicable int64    `json:"NotApplicable"`
	NeedsTraining int64    `json:"NeedsTraining"`
	SelfAssessed  int64    `json:"SelfAssessed"`
	Submitted     int64    `json:"Submitted"`
	Validated     int64    `json:"Validated"`
}
