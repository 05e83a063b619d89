package legacy

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestCallback covers the partner callback: storage, completion, content negotiation, errors.
func TestCallback(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const activity = "0190a6f0-0000-7000-8000-0000000005a1"
		path := "/api/integration/partner/callback/" + activity + "/" + ada
		send := func(contentType, accept, body string) (int, string, string) {
			h := http.Header{}
			if contentType != "" {
				h.Set("Content-Type", contentType)
			}
			if accept != "" {
				h.Set("Accept", accept)
			}
			rec := e.doWith("POST", path, body, h)
			return rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()
		}
		for _, c := range []struct {
			name, contentType, accept, body string
			status                          int
			mediaType, answer               string
		}{
			{name: "json, no status", contentType: "application/json", body: `{"score":3}`,
				status: 200, mediaType: "application/json", answer: `{"Message":"Callback received."}`},
			{name: "json incomplete", contentType: "application/json", accept: "text/json", body: `{"cmi.core.lesson_status":"incomplete"}`,
				status: 200, mediaType: "text/json", answer: `{"Message":"Callback received."}`},
			{name: "json completed", contentType: "application/json", accept: "application/json", body: `{"cmi.core.lesson_status":"completed"}`,
				status: 200, mediaType: "application/json", answer: `{"Message":"Activity completed."}`},
			{name: "nested json, xml answer", contentType: "application/json", accept: "application/xml", body: `{"cmi":{"core":{"lesson_status":"Passed"}}}`,
				status: 200, mediaType: "application/xml", answer: `<CallbackResponse><Message>Activity completed.</Message></CallbackResponse>`},
			{name: "form value, text/xml", contentType: "application/x-www-form-urlencoded", accept: "text/xml", body: `cmi.core.lesson_status=passed&x=1`,
				status: 200, mediaType: "text/xml", answer: `<Message>Activity completed.</Message>`},
			{name: "untyped form, html answer", accept: "text/html", body: `cmi.core.lesson_status=completed`,
				status: 200, mediaType: "text/html", answer: `<p>Activity completed.</p>`},
			{name: "browser accept", accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", body: `a=b`,
				status: 200, mediaType: "text/html", answer: `Callback received.`},
			{name: "q ranks", accept: "application/json;q=0.5, text/xml", body: `a=b`,
				status: 200, mediaType: "text/xml", answer: `Callback received.`},
			{name: "wildcard", accept: "*/*", body: `a=b`, status: 200, mediaType: "application/json", answer: `Callback received.`},
			{name: "unsupported accept", accept: "image/png", body: `{"cmi.core.lesson_status":"completed"}`, status: 406, mediaType: "application/problem+json"},
			{name: "empty body", body: ``, status: 400, mediaType: "application/problem+json", answer: msgCallbackEmpty},
			{name: "blank body", contentType: "application/json", body: " \n", status: 400, mediaType: "application/problem+json", answer: msgCallbackEmpty},
			{name: "malformed json", contentType: "application/json", body: `{"cmi.core.lesson_status":`, status: 400, mediaType: "application/problem+json", answer: msgCallbackBadJSON},
		} {
			t.Run(c.name, func(t *testing.T) {
				status, mediaType, body := send(c.contentType, c.accept, c.body)
				if status != c.status || !strings.HasPrefix(mediaType, c.mediaType) || !strings.Contains(body, c.answer) {
					t.Fatalf("got %d %s %s\nwant %d %s containing %s", status, mediaType, body, c.status, c.mediaType, c.answer)
				}
			})
		}
		if n := e.count("CallbackEvent", "ActivityIdentifier", activity); n != 9 {
			t.Errorf("%d callbacks stored, want the 9 accepted ones", n)
		}
		r := registry.MustByName("CallbackEvent")
		var payload string
		e.store.DB(context.Background()).Table(e.store.TableName(r)).Select(column(r, "Payload")).
			Where(eq("", r, "LessonStatus", "incomplete")).Scan(&payload)
		if payload != `{"cmi.core.lesson_status":"incomplete"}` {
			t.Errorf("raw payload %q", payload)
		}
		p := registry.MustByName("ActivityProgress")
		var rows []struct {
			Completed string
			Status    string
		}
		e.store.DB(context.Background()).Table(e.store.TableName(p)).Select(column(p, "Completed") + " AS completed, " + column(p, "Status") + " AS status").
			Where(eq("", p, "LearnerIdentifier", ada)).Scan(&rows)
		if len(rows) != 1 || rows[0].Status != "completed" {
			t.Fatalf("progress %v", rows)
		}
		// The first completion is kept: the third accepted callback, at the test clock's third second.
		if !strings.HasPrefix(rows[0].Completed, "2030-01-15T12:00:03") {
			t.Errorf("Completed %s, want the first completion", rows[0].Completed)
		}
		if status, _, _ := send("application/json", "", `{}`); status != 200 {
			t.Fatal(status)
		}
		if rec := e.do("POST", "/api/integration/partner/callback/"+activity+"/not-a-uuid", `{}`, "-"); rec.Code != 404 {
			t.Fatalf("non-uuid learner: %d", rec.Code)
		}
	})
}
