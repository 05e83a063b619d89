package legacy

import (
	"net/http"
	"strings"

	"credo/auth"
	"credo/handlers/route"
)

// The permission objects of version 1 (decisions §7): each protected route needs one flag on
// one of them, as a v2 route does on its group. Their ObjectIdentifier is auth.ObjectID of the
// name, and security/settings/resources lists them. Read covers list-events and the
// registration reads, Create adding an event, Delete deleting a registration, and Execute the
// commands: cancelling an event, and register-lax, transfer-lax, cancel, change-assessment,
// grant- and revoke-accommodation (register-lax and transfer-lax create the event they need
// under that one flag).
const (
	EventsObject        = "api/events"
	RegistrationsObject = "api/registrations"
)

// Describe returns the version-1 routes as the OpenAPI document describes them: the same table
// that Routes mounts, without handlers.
func Describe() []route.Route {
	routes := (*api)(nil).routes()
	for i := range routes {
		routes[i].Handler = nil
	}
	return routes
}

// routes is the version-1 API: every operation of api.md under /api with what it reads and
// answers. Path parameters described with the uuid format only match UUIDs (see Routes).
func (a *api) routes() []route.Route {
	const (
		reg   = "/api/registrations/{registration}"
		event = "/api/events/{event}"
	)
	regParam := route.Param{Name: "registration", In: route.InPath, Schema: route.UUID(""),
		Description: "The registration's identifier; a value that is not a UUID is a 404."}
	eventParam := route.Param{Name: "event", In: route.InPath, Schema: route.UUID(""),
		Description: "The event's identifier; a value that is not a UUID is a 404."}
	// Every protected route authenticates with a token or a client secret and needs the flag
	// need on the permission object (403 without it); secrets are rate limited (429), and the
	// database may be down (503).
	protected := func(object string, need auth.Flag, rt route.Route) route.Route {
		rt.Access, rt.Object, rt.Need = route.Protected, object, string(need)
		rt.Errors = append(rt.Errors, http.StatusTooManyRequests, http.StatusServiceUnavailable)
		return rt
	}
	// The answers that several routes share are components of the document (route.Schema.Name):
	// a generated client has one V1Registration, V1Event and V1Placement type. Their ints are
	// api.md's, 32-bit (the columns are, and TimeLimit is kept within them), and their
	// identifiers UUIDs.
	whole := route.Schema{Format: "int32"}
	nonNegative := route.Schema{Format: "int32", Minimum: route.Int(0)}
	members := func(uuids []string, more map[string]route.Schema) map[string]route.Schema {
		for _, m := range uuids {
			more[m] = route.Schema{Format: "uuid"}
		}
		return more
	}
	links := []string{"EventIdentifier", "EventVenue", "LearnerIdentifier", "AssessmentFormIdentifier", "RegistrationIdentifier"}
	registrationSchema := route.Schema{Go: registrationView{}, Name: "V1Registration", Members: members(links, map[string]route.Schema{
		"EventNumber": whole, "TimeLimit": nonNegative,
		"Accommodations": route.ArrayOf(route.Schema{Go: accommodation{}, Members: map[string]route.Schema{"TimeExtension": nonNegative}}),
	})}
	summarySchema := route.Schema{Go: registrationItem{}, Name: "V1RegistrationSummary",
		Members: members(links, map[string]route.Schema{"EventNumber": whole})}
	eventSchema := route.Schema{Go: eventView{}, Name: "V1Event", Members: members([]string{"EventIdentifier", "EventVenue"},
		map[string]route.Schema{"EventNumber": whole, "RegistrationLimit": nonNegative})}
	classSchema := route.Schema{Go: classView{}, Name: "V1Class", Members: members([]string{"EventIdentifier", "EventVenue"},
		map[string]route.Schema{"EventNumber": whole})}
	placement := route.Schema{Go: placed{}, Name: "V1Placement", Members: members([]string{"Event", "Registration"}, map[string]route.Schema{})}
	changed := named("The registration after the change.", registrationSchema)
	// A command's operationId is v1 and the command's name in camel case, as the other
	// version-1 operations' (v1RegisterLax): generated clients name their methods after it.
	command := func(name, summary, description string, body *route.Body, answer []route.Response, h func(http.ResponseWriter, *http.Request) error) route.Route {
		return protected(RegistrationsObject, auth.Execute, route.Route{Method: http.MethodPost, Path: reg + "/commands/" + name, Tag: "registrations",
			OperationID: commandOperationID(name), Summary: summary, Description: description,
			Params: []route.Param{regParam}, Body: body, Responses: answer,
			Errors:     []int{http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge},
			Idempotent: true, Handler: h})
	}
	reason := object(route.Property{Name: "Reason", Schema: route.String("Why.").OrNull()})
	reason.Name = "V1ReasonInput" // the body of both cancels

	return []route.Route{
		protected(EventsObject, auth.Read, route.Route{Method: http.MethodGet, Path: "/api/events/list-events", Tag: "events", OperationID: "v1ListEvents",
			Summary: "List the organization's events that start on a day.",
			Params: []route.Param{{Name: "date", In: route.InQuery, Required: true, Schema: route.String(""),
				Description: "The day: yyyy-MM-dd (UTC), or a datetime with an offset (that day in that offset)."}},
			Responses: named("The events, by start.", route.ArrayOf(eventSchema)),
			Errors:    []int{http.StatusBadRequest},
			Handler:   a.listEvents}),
		{Method: http.MethodGet, Path: "/api/events/classes", Tag: "events", OperationID: "v1ListClasses", Access: route.Public,
			Summary: "List the classes (events of type Class, not cancelled) of an organization.",
			Params: []route.Param{{Name: "organization", In: route.InQuery, Required: true, Schema: route.UUID(""),
				Description: "The organization's identifier."}},
			Responses: named("The classes, by start.", route.ArrayOf(classSchema)),
			Errors:    []int{http.StatusBadRequest, http.StatusServiceUnavailable},
			Handler:   a.classes},
		{Method: http.MethodGet, Path: "/api/events/scrap-paper", Tag: "events", OperationID: "v1ScrapPaper", Access: route.Public,
			Summary: "A printable PDF of ruled scrap paper headed by the id, and by the registration or event it names, if any.",
			Params: []route.Param{{Name: "id", In: route.InQuery, Required: true,
				Schema:      route.Schema{Type: "string", Pattern: `\S`, MaxLength: route.Int(MaxScrapPaperID)},
				Description: "The id printed on the sheet, as given: any text that is not blank."}},
			Responses: []route.Response{{Status: http.StatusOK, Description: "The PDF (inline).",
				Headers: []route.Header{{Name: "Content-Disposition", Required: true, Schema: route.String(""),
					Description: `inline; filename="scrap-paper-<id>.pdf"`}},
				Content: []route.Content{{MediaType: "application/pdf", Schema: route.Schema{Type: "string", Format: "binary"}}}}},
			Errors:  []int{http.StatusBadRequest, http.StatusNotAcceptable, http.StatusServiceUnavailable},
			Handler: a.scrapPaper},
		protected(EventsObject, auth.Create, route.Route{Method: http.MethodPost, Path: event, Tag: "events", OperationID: "v1AddEvent",
			Summary: "Add an event with the identifier of the path.",
			Params:  []route.Param{eventParam},
			Body: &route.Body{Content: []route.Content{{MediaType: "application/json", Schema: object(
				route.Property{Name: "EventVenue", Schema: route.UUID("The venue; it must exist.").OrNull()},
				route.Property{Name: "EventStart", Schema: route.Schema{Format: "date-time", Nullable: true, Description: "In the future."}},
				route.Property{Name: "EventExamType", Schema: route.String(examTypesText).OrNull()},
				route.Property{Name: "EventExamFormat", Schema: route.String("Online or Paper.").OrNull()},
				route.Property{Name: "EventBillingCode", Schema: route.String("One of the organization's billing codes.").OrNull()},
				route.Property{Name: "RegistrationLimit", Schema: route.Schema{Type: "integer", Format: "int32", Minimum: route.Int(0), Nullable: true,
					Description: "The most registrations the event takes; null: no limit."}},
			)}}},
			Responses: named("The event.", eventSchema),
			Errors:    []int{http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge},
			Handler:   a.addEvent}),
		protected(EventsObject, auth.Execute, route.Route{Method: http.MethodPost, Path: event + "/cancel", Tag: "events", OperationID: "v1CancelEvent",
			Summary:   "Cancel an event.",
			Params:    []route.Param{eventParam},
			Body:      &route.Body{Content: []route.Content{{MediaType: "application/json", Schema: reason}}},
			Responses: named("The cancelled event.", eventSchema),
			Errors:    []int{http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge},
			Handler:   a.cancelEvent}),
		protected(RegistrationsObject, auth.Read, route.Route{Method: http.MethodPost, Path: "/api/registrations/count", Tag: "registrations", OperationID: "v1CountRegistrations",
			Summary:   "Count the organization's registrations matching the criteria.",
			Body:      criteriaBody(),
			Responses: ok("The number of matches.", struct{ Count int64 }{}),
			Errors:    []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge},
			Handler:   a.countRegistrations}),
		protected(RegistrationsObject, auth.Read, route.Route{Method: http.MethodPost, Path: "/api/registrations/search", Tag: "registrations", OperationID: "v1SearchRegistrations",
			Summary:   "Find the organization's registrations matching the criteria, newest change first (at most 1,000).",
			Body:      criteriaBody(),
			Responses: named("The matching registrations.", route.ArrayOf(summarySchema)),
			Errors:    []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge},
			Handler:   a.searchRegistrations}),
		protected(RegistrationsObject, auth.Read, route.Route{Method: http.MethodGet, Path: reg, Tag: "registrations", OperationID: "v1GetRegistration",
			Summary:   "Retrieve a registration.",
			Params:    []route.Param{regParam},
			Responses: named("The registration.", registrationSchema),
			Errors:    []int{http.StatusNotFound},
			Handler:   a.getRegistration}),
		protected(RegistrationsObject, auth.Delete, route.Route{Method: http.MethodDelete, Path: reg, Tag: "registrations", OperationID: "v1DeleteRegistration",
			Summary: "Delete a registration and its accommodations.",
			Params:  []route.Param{regParam},
			Responses: ok("Deleted.", struct {
				Registration string
				Deleted      bool
			}{}),
			Errors:  []int{http.StatusNotFound},
			Handler: a.deleteRegistration}),
		command("register-lax", "Register a learner on the event found by venue and start, creating the event when none matches.",
			"The event of the venue whose start lies in [EventStart, EventStart + 1 minute) is joined; otherwise one is created, "+
				"which needs EventExamType, EventExamFormat and EventBillingCode. The answer is the placement.",
			&route.Body{Content: []route.Content{{MediaType: "application/json", Schema: laxSchema(true)}}},
			named("Where the registration was placed.", placement), a.registerLax),
		command("transfer-lax", "Move a registration to the event found by venue and start, creating the event when none matches.",
			"The assessment form stays. The answer is the placement.",
			&route.Body{Content: []route.Content{{MediaType: "application/json", Schema: laxSchema(false)}}},
			named("Where the registration was placed.", placement), a.transferLax),
		command("cancel", "Cancel a registration.", "", &route.Body{Content: []route.Content{{MediaType: "application/json", Schema: reason}}},
			changed, a.cancelRegistration),
		command("change-assessment", "Assign another assessment form, by form code.", "",
			&route.Body{Content: []route.Content{{MediaType: "application/json", Schema: object(
				route.Property{Name: "Assessment", Schema: route.String("The form code of a published, non-bilingual form.").OrNull()})}}},
			changed, a.changeAssessment),
		command("grant-accommodation", "Grant an accommodation, or replace the one of the same Type; the time limit is recomputed.", "",
			&route.Body{Content: []route.Content{{MediaType: "application/json", Schema: accommodationSchema()}}},
			changed, a.grantAccommodation),
		command("revoke-accommodation", "Revoke the accommodation of a Type (absent: nothing changes); the time limit is recomputed.", "",
			&route.Body{Content: []route.Content{{MediaType: "application/json", Schema: object(
				route.Property{Name: "Type", Schema: route.String("Required.").OrNull()})}}},
			changed, a.revokeAccommodation),
		{Method: http.MethodPost, Path: "/api/integration/partner/callback/{activityId}/{learnerId}", Tag: "integration",
			OperationID: "v1PartnerCallback", Access: route.Public,
			Summary: "Receive a learning-activity partner's callback for an activity and a learner.",
			Description: "The payload is stored as received. When its `cmi.core.lesson_status` (a JSON member, top-level or nested, " +
				"or a form value) is completed or passed, the learner's activity is marked complete. A body of another or no " +
				"type is read as JSON when it looks like an object, else as a form.",
			Params: []route.Param{
				{Name: "activityId", In: route.InPath, Schema: route.UUID("The activity; a value that is not a UUID is a 404.")},
				{Name: "learnerId", In: route.InPath, Schema: route.UUID("The learner; a value that is not a UUID is a 404.")},
			},
			Body: &route.Body{Required: true, Description: "The partner's payload; an empty one is a 400.", Content: []route.Content{
				{MediaType: "application/json", Schema: route.Schema{Type: "object"}},
				{MediaType: "application/x-www-form-urlencoded", Schema: route.Schema{Type: "object"}},
				{MediaType: "multipart/form-data", Schema: route.Schema{Type: "object"}},
				{MediaType: "*/*", Schema: route.Schema{Type: "string", Format: "binary"}},
			}},
			Responses: []route.Response{{Status: http.StatusOK, Description: "Received; the answer's type follows Accept.", Content: []route.Content{
				{MediaType: "application/json", Schema: route.Schema{Go: callbackAnswer{}}},
				{MediaType: "text/json", Schema: route.Schema{Go: callbackAnswer{}}},
				{MediaType: "application/xml", Schema: route.String("<CallbackResponse><Message>…</Message></CallbackResponse>")},
				{MediaType: "text/*", Schema: route.String("text/xml: the XML of application/xml; text/html: a page with the message.")},
			}}},
			Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusNotAcceptable, http.StatusRequestEntityTooLarge,
				http.StatusTooManyRequests, http.StatusServiceUnavailable},
			Handler: a.callback},
	}
}

// commandOperationID is the operationId of a registration command: "v1" and its name in camel
// case, e.g. v1RegisterLax, v1GrantAccommodation; cancel is v1CancelRegistration, beside
// v1CancelEvent.
func commandOperationID(name string) string {
	if name == "cancel" {
		return "v1CancelRegistration"
	}
	id := "v1"
	for _, w := range strings.Split(name, "-") {
		id += strings.ToUpper(w[:1]) + w[1:]
	}
	return id
}

// callbackAnswer is the callback's answer in JSON.
type callbackAnswer struct {
	Message string `json:"Message"`
}

const examTypesText = "Class, Individual, Individual (A), Individual (N), Sitting, Test or Accessibility and Resource Centre (ARC)."

func ok(desc string, v any) []route.Response {
	return []route.Response{{Status: http.StatusOK, Description: desc, Content: route.JSON(v)}}
}

// named is ok of a schema: a named component, or an array of one.
func named(desc string, s route.Schema) []route.Response {
	return []route.Response{{Status: http.StatusOK, Description: desc, Content: []route.Content{{MediaType: "application/json", Schema: s}}}}
}

func object(props ...route.Property) route.Schema {
	return route.Schema{Type: "object", Properties: props}
}

func criteriaBody() *route.Body {
	criteria := object(
		route.Property{Name: "Name", Schema: route.String("Part of the learner's name, ignoring case.").OrNull()},
		route.Property{Name: "Email", Schema: route.String("Part of the learner's email, ignoring case.").OrNull()},
		route.Property{Name: "Code", Schema: route.String("Part of the learner's person code, ignoring case.").OrNull()},
		route.Property{Name: "LastChangeTimeSince", Schema: route.Schema{Format: "date-time", Nullable: true, Description: "Changed at or after (inclusive)."}},
		route.Property{Name: "LastChangeTimeBefore", Schema: route.Schema{Format: "date-time", Nullable: true, Description: "Changed before (exclusive)."}},
	)
	criteria.Name = "V1RegistrationCriteria" // the body of count and search
	return &route.Body{Description: "The criteria; every member is optional, and an empty body matches every registration.",
		Content: []route.Content{{MediaType: "application/json", Schema: criteria}}}
}

// accommodationSchema is an Accommodation in a body, the component V1AccommodationInput.
func accommodationSchema() route.Schema {
	s := object(
		route.Property{Name: "Type", Schema: route.String("Identifies the kind of accommodation; required and not blank.").OrNull()},
		route.Property{Name: "Name", Schema: route.String("A short clarifying description.").OrNull()},
		route.Property{Name: "TimeExtension", Schema: route.Schema{Type: "integer", Format: "int32", Minimum: route.Int(0), Nullable: true,
			Description: "Extra minutes. The form's time limit plus every extension of the registration must stay within " +
				"2,147,483,647 minutes; more is a 400 naming TimeExtension."}},
	)
	s.Name = "V1AccommodationInput"
	return s
}

// laxSchema is the body of register-lax (register) or transfer-lax.
func laxSchema(register bool) route.Schema {
	props := []route.Property{
		{Name: "EventVenue", Schema: route.UUID("The venue; required.").OrNull()},
		{Name: "EventStart", Schema: route.Schema{Format: "date-time", Nullable: true, Description: "Required, in the future."}},
		{Name: "EventExamType", Schema: route.String("Required when an event is created: " + examTypesText).OrNull()},
	}
	if register {
		props = append(props,
			route.Property{Name: "EventExamFormat", Schema: route.String("Required when an event is created: Online or Paper.").OrNull()},
			route.Property{Name: "EventBillingCode", Schema: route.String("Required when an event is created.").OrNull()},
		)
	}
	props = append(props, route.Property{Name: "Learner", Schema: route.UUID("The learner (a user); required.").OrNull()})
	if register {
		props = append(props,
			route.Property{Name: "LearnerRegistrantType", Schema: route.String("").OrNull()},
			route.Property{Name: "Assessment", Schema: route.String("The form code; required.").OrNull()},
		)
	} else {
		props = append(props, route.Property{Name: "Reason", Schema: route.String("Why.").OrNull()})
	}
	acc := route.ArrayOf(accommodationSchema()).OrNull()
	return object(append(props, route.Property{Name: "Accommodations", Schema: acc})...)
}
