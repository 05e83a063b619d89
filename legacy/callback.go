package legacy

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"credo/engine"
	"credo/handlers/request"
)

// lessonStatusKey is the SCORM member that reports the learner's status in a partner callback.
const lessonStatusKey = "cmi.core.lesson_status"

// MaxCallbackBytes caps the anonymous partner callback's body: anyone can send it, and a
// SCORM status report is a few kilobytes. Larger is a 413.
const MaxCallbackBytes = 64 << 10

// callbackTypes are the media types the callback answers in, in order of preference.
var callbackTypes = []string{"application/json", "text/json", "application/xml", "text/xml", "text/html"}

// callbackOffers are callbackTypes as offers for request.Negotiate.
var callbackOffers = func() []request.Offer {
	offers := make([]request.Offer, len(callbackTypes))
	for i, t := range callbackTypes {
		offers[i] = request.Offer{Type: t}
	}
	return offers
}()

// Callback answers.
const (
	msgCallbackReceived  = "Callback received."
	msgCallbackCompleted = "Activity completed."
	msgCallbackEmpty     = "The callback body is empty."
	msgCallbackBadJSON   = "The callback body is not valid JSON."
	msgCallbackBadForm   = "The callback body is not a valid form."
	msgCallbackNotText   = "The callback body is not valid UTF-8 text without U+0000."
)

// callback stores the partner's payload as received and, when its cmi.core.lesson_status (a
// JSON member, top-level or nested, or a form value) is completed or passed, marks the learner's
// activity complete. It is anonymous (decisions §12) and answers {"Message"} as JSON, XML or
// HTML by Accept.
func (a *api) callback(w http.ResponseWriter, r *http.Request) error {
	if err := a.limits.Callback.Allow(a.limits.Clients.Address(r)); err != nil {
		return err
	}
	mediaType, err := negotiateCallback(w, r)
	if err != nil {
		return err
	}
	activity, learner := pathID(r, "activityId"), pathID(r, "learnerId")
	data, err := request.Read(w, r, MaxCallbackBytes)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(msgCallbackEmpty)
	}
	// The payload is kept as text: what the database cannot keep exactly is refused.
	if p := engine.CheckText(string(data)); p != "" {
		return failMember(msgCallbackNotText, "body", "the callback body "+p)
	}
	contentType := r.Header.Get("Content-Type")
	if p := engine.CheckText(contentType); p != "" {
		return engine.InvalidMember("Content-Type", "the Content-Type header %s", p)
	}
	status, err := lessonStatus(contentType, data)
	if err != nil {
		return err
	}
	if status != nil {
		if p := engine.CheckText(*status); p != "" {
			return failMember(msgCallbackNotText, "cmi.core.lesson_status", "cmi.core.lesson_status "+p)
		}
	}
	completed := status != nil && (strings.EqualFold(*status, "completed") || strings.EqualFold(*status, "passed"))
	ctx := r.Context()
	now := a.now()
	err = a.store.Transaction(ctx, func(tx *engine.Store) error {
		var ct any
		if contentType != "" {
			ct = contentType
		}
		err := newDraft(a.t.callback).
			set("ActivityIdentifier", activity).
			set("LearnerIdentifier", learner).
			set("CallbackReceived", now).
			set("ContentType", ct).
			set("Payload", string(data)).
			set("LessonStatus", opt(status)).
			insert(ctx, tx)
		if err != nil || !completed {
			return err
		}
		return a.complete(tx.DB(ctx), activity, learner, strings.ToLower(*status), now)
	})
	if err != nil {
		return err
	}
	msg := msgCallbackReceived
	if completed {
		msg = msgCallbackCompleted
	}
	return writeMessage(w, mediaType, msg)
}

// complete records the learner's activity as complete: the first completion time is kept and
// the status is the latest one.
func (a *api) complete(db *gorm.DB, activity, learner, status string, now engine.DateTime) error {
	p := a.t.progress
	completed := column(p, "Completed")
	return a.table(db, p).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: column(p, "ActivityIdentifier")}, {Name: column(p, "LearnerIdentifier")}},
		DoUpdates: append(clause.AssignmentColumns([]string{column(p, "Status")}), clause.Assignment{
			Column: clause.Column{Name: completed},
			Value:  clause.Expr{SQL: `COALESCE("` + p.Table + `"."` + completed + `", excluded."` + completed + `")`},
		}),
	}).Create(map[string]any{
		column(p, "ActivityIdentifier"): activity,
		column(p, "LearnerIdentifier"):  learner,
		completed:                       now,
		column(p, "Status"):             status,
	}).Error
}

// lessonStatus finds cmi.core.lesson_status in a callback body by its Content-Type; a body of
// another or no type is read as JSON when it looks like an object, else as a form.
func lessonStatus(contentType string, body []byte) (*string, error) {
	mt, params, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json"):
		return jsonStatus(body)
	case mt == "application/x-www-form-urlencoded":
		return formStatus(body)
	case mt == "multipart/form-data":
		form, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(MaxCallbackBytes)
		if err != nil {
			return nil, fail(msgCallbackBadForm)
		}
		defer func() { _ = form.RemoveAll() }()
		if v := form.Value[lessonStatusKey]; len(v) > 0 {
			return &v[0], nil
		}
		return nil, nil
	case bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")):
		status, _ := jsonStatus(body)
		return status, nil
	}
	status, _ := formStatus(body)
	return status, nil
}

func jsonStatus(body []byte) (*string, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fail(msgCallbackBadJSON)
	}
	obj, _ := v.(map[string]any)
	if s, ok := obj[lessonStatusKey].(string); ok {
		return &s, nil
	}
	// {"cmi":{"core":{"lesson_status":…}}}
	for _, k := range strings.Split(lessonStatusKey, ".") {
		switch x := obj[k].(type) {
		case map[string]any:
			obj = x
		case string:
			if k == "lesson_status" {
				return &x, nil
			}
			return nil, nil
		default:
			return nil, nil
		}
	}
	return nil, nil
}

func formStatus(body []byte) (*string, error) {
	values, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fail(msgCallbackBadForm)
	}
	if !values.Has(lessonStatusKey) {
		return nil, nil
	}
	s := values.Get(lessonStatusKey)
	return &s, nil
}

// negotiateCallback picks the answer's media type from Accept among callbackTypes
// (request.NegotiateFor, which marks w's answer Vary: Accept): */* and application/* mean
// JSON, text/* text/json; none or an empty Accept is JSON; anything else is a 406.
func negotiateCallback(w http.ResponseWriter, r *http.Request) (string, error) {
	return request.NegotiateFor(w, r, callbackOffers...)
}

// callbackMessage is the callback's answer in XML.
type callbackMessage struct {
	XMLName xml.Name `xml:"CallbackResponse"`
	Message string   `xml:"Message"`
}

// writeMessage answers {"Message": msg} in the negotiated media type.
func writeMessage(w http.ResponseWriter, mediaType, msg string) error {
	var body []byte
	switch mediaType {
	case "application/xml", "text/xml":
		b, err := xml.Marshal(callbackMessage{Message: msg})
		if err != nil {
			return fmt.Errorf("legacy: encode callback answer: %w", err)
		}
		body = append([]byte(xml.Header), b...)
	case "text/html":
		body = []byte("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Callback</title></head><body><p>" +
			html.EscapeString(msg) + "</p></body></html>")
	default:
		b, err := json.Marshal(map[string]string{"Message": msg})
		if err != nil {
			return fmt.Errorf("legacy: encode callback answer: %w", err)
		}
		body = b
	}
	w.Header().Set("Content-Type", mediaType+"; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(append(body, '\n'))
	return err
}
