package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	problemdoc "credo/handlers/problem"
	"credo/internal/testenv"
)

// TestHostileInput: what a client may send by mistake or malice — text the stores cannot keep
// (U+0000, invalid UTF-8, lone surrogates), a malformed query string, values beyond a
// member's limits or the instants credo keeps, repeated or inexactly typed JSON members, a
// nil required reference or key, a projection of nothing — is a 400 problem naming the parameter or
// member, on both stores, and changes nothing.
func TestHostileInput(t *testing.T) {
	reg := registry(t)
	long := strings.Repeat("x", 4001)
	sortTerms := strings.TrimSuffix(strings.Repeat("CommentText,", 2000), ",")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			org, user, author := uuid.NewString(), uuid.NewString(), uuid.NewString()
			comment := func(extra string) string {
				return fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q%s}`, author, org, user, extra)
			}
			res := ts.do(t, "POST", "security/users-comments", comment(`,"CommentText":"kept","CommentCreated":"2024-03-10T14:30:00-06:00"`)).
				expect(t, "create", http.StatusCreated)
			var stored map[string]any
			if err := json.Unmarshal(res.body, &stored); err != nil {
				t.Fatal(err)
			}
			item := "security/users-comments/" + stored["CommentIdentifier"].(string)
			field := put(t, ts, reg.MustByName("PersonField"), map[string]any{"UserIdentifier": user, "FieldSequence": 1})
			fieldItem := "directory/people-fields/" + field["FieldIdentifier"].(string)
			const nilUUID = "00000000-0000-0000-0000-000000000000"

			tests := []struct {
				name, method, path, body, member string
				contentType                      string
			}{
				// U+0000, invalid UTF-8 and surrogates in filters, paths and bodies.
				{name: "NUL in a contains filter", method: "GET", path: "security/users-comments?CommentText=a%00b", member: "CommentText"},
				{name: "NUL in a count filter", method: "GET", path: "security/users-comments/count?CommentText=%00", member: "CommentText"},
				{name: "invalid byte in a filter", method: "GET", path: "security/users-comments?CommentText=%ff", member: "CommentText"},
				{name: "truncated sequence in a filter", method: "GET", path: "security/users-comments/search?CommentText=%c3%28", member: "CommentText"},
				{name: "surrogate in a filter", method: "GET", path: "security/users-comments?CommentText=%ed%a0%80", member: "CommentText"},
				{name: "invalid byte in Origin", method: "GET", path: "security/users-comments?Origin.Reason=%ff", member: "Origin.Reason"},
				{name: "NUL in a path segment", method: "GET", path: "security/users-comments/%00", member: "CommentIdentifier"},
				{name: "invalid byte in a path segment", method: "DELETE", path: "security/users-comments/%ff", member: "CommentIdentifier"},
				{name: "NUL in a body", method: "POST", path: "security/users-comments", body: comment(`,"CommentText":"a\u0000b"`), member: "CommentText"},
				{name: "invalid byte in a body", method: "POST", path: "security/users-comments", body: comment(",\"CommentText\":\"\xff\""), member: "CommentText"},
				{name: "lone surrogate in a body", method: "POST", path: "security/users-comments", body: comment(`,"CommentText":"\udc00"`), member: "CommentText"},
				{name: "NUL in a patch", method: "PATCH", path: item, body: `{"CommentText":"\u0000"}`, member: "CommentText"},
				{name: "surrogate in a put", method: "PUT", path: item, body: comment(`,"CommentText":"\ud800x"`), member: "CommentText"},
				// Malformed query strings are never read as defaults.
				{name: "malformed escape in a value", method: "GET", path: "security/users-comments?Take=%zz", member: "Take"},
				{name: "semicolon", method: "GET", path: "security/users-comments?Take=5;Sort=Nope", member: "Take"},
				{name: "malformed escape in a name", method: "GET", path: "security/users-comments?%zz=1", member: "%zz"},
				{name: "malformed query on a get", method: "GET", path: item + "?Includes=%zz", member: "Includes"},
				// Count takes the Filter.* paging parameters and ignores them, but not their mistakes.
				{name: "count with Filter.Take not an int", method: "GET", path: "security/users-comments/count?Filter.Take=abc", member: "Filter.Take"},
				{name: "count with Filter.Page out of range", method: "GET", path: "security/users-comments/count?Filter.Page=0", member: "Filter.Page"},
				{name: "count with Filter.Sort of no field", method: "GET", path: "security/users-comments/count?Filter.Sort=Nope", member: "Filter.Sort"},
				{name: "count with Filter.Format of no format", method: "GET", path: "security/users-comments/count?Filter.Format=xml", member: "Filter.Format"},
				{name: "count with Filter.Includes of no member", method: "GET", path: "security/users-comments/count?Filter.Includes=Nope", member: "Filter.Includes"},
				// A Filter.* alias is named as sent on list and search too (found by FuzzListQuery).
				{name: "list with Filter.Format of no format", method: "GET", path: "security/users-comments?Filter.Format=xml", member: "Filter.Format"},
				{name: "search with Filter.Take out of range", method: "GET", path: "security/users-comments/search?Filter.Take=0", member: "Filter.Take"},
				{name: "list with Filter.Includes of no member", method: "GET", path: "security/users-comments?Filter.Includes=Nope", member: "Filter.Includes"},
				{name: "datetime with a signed offset minute", method: "GET", path: "security/users-comments?CommentCreated=2024-03-10T14:30:00%2B05:-1", member: "CommentCreated"},
				{name: "datetime with a doubled offset sign", method: "POST", path: "security/users-comments", body: comment(`,"CommentCreated":"2024-03-10T14:30:00++1:00"`), member: "CommentCreated"},
				// Limits before the database's.
				{name: "filter longer than the member", method: "GET", path: "security/users-comments?CommentText=" + long, member: "CommentText"},
				{name: "100 KB contains filter", method: "GET", path: "security/users-comments?CommentText=" + strings.Repeat("y", 100_000), member: "CommentText"},
				{name: "2000 sort terms", method: "GET", path: "security/users-comments?Sort=" + sortTerms, member: "Sort"},
				{name: "body string longer than the member", method: "POST", path: "security/users-comments", body: comment(`,"CommentText":"` + long + `"`), member: "CommentText"},
				// Instants outside years 1 to 9999 in UTC.
				{name: "datetime after 9999 in a body", method: "POST", path: "security/users-comments", body: comment(`,"CommentCreated":"9999-12-31T23:00:00-02:00"`), member: "CommentCreated"},
				{name: "datetime before 0001 in a patch", method: "PATCH", path: item, body: `{"CommentCreated":"0001-01-01T00:30:00+01:00"}`, member: "CommentCreated"},
				{name: "datetime after 9999 in a filter", method: "GET", path: "security/users-comments?CommentCreated=9999-12-31T23:00:00-02:00", member: "CommentCreated"},
				// JSON as it is written.
				{name: "repeated member", method: "POST", path: "security/users-comments", body: comment(`,"CommentText":"a","CommentText":"b"`), member: "CommentText"},
				{name: "repeated member in a patch", method: "PATCH", path: item, body: `{"CommentText":"a","CommentText":"b"}`, member: "CommentText"},
				{name: "quoted int", method: "PUT", path: fieldItem, body: fmt.Sprintf(`{"UserIdentifier":%q,"FieldSequence":"7"}`, user), member: "FieldSequence"},
				{name: "quoted negative zero", method: "PATCH", path: fieldItem, body: `{"FieldSequence":"-0"}`, member: "FieldSequence"},
				{name: "fractional int", method: "PATCH", path: fieldItem, body: `{"FieldSequence":7.5}`, member: "FieldSequence"},
				// Required references.
				{name: "nil UUID on create", method: "POST", path: "security/users-comments", body: fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q}`, author, org, nilUUID), member: "UserIdentifier"},
				{name: "nil UUID on put", method: "PUT", path: item, body: fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q}`, nilUUID, org, user), member: "CommentCreatedBy"},
				{name: "nil UUID on patch", method: "PATCH", path: item, body: `{"OrganizationIdentifier":"` + nilUUID + `"}`, member: "OrganizationIdentifier"},
				// A key given as the nil UUID: a typed client's unset Guid names no record.
				{name: "nil UUID key on create", method: "POST", path: "security/users-comments", body: comment(`,"CommentIdentifier":"` + nilUUID + `"`), member: "CommentIdentifier"},
				{name: "nil UUID key on put", method: "PUT", path: item, body: comment(`,"CommentIdentifier":"` + nilUUID + `"`), member: "CommentIdentifier"},
				{name: "nil UUID key on patch", method: "PATCH", path: item, body: `{"CommentIdentifier":"` + nilUUID + `"}`, member: "CommentIdentifier"},
				// Projections of nothing.
				{name: "search excluding its one member", method: "GET", path: "security/users-comments/search?Excludes=CommentIdentifier", member: "Excludes"},
				{name: "include and exclude the same", method: "GET", path: "security/users-comments?Includes=CommentText&Excludes=CommentText", member: "Excludes"},
				{name: "includes naming nothing", method: "GET", path: "security/users-comments?Includes=,", member: "Includes"},
				{name: "includes naming nothing on a get", method: "GET", path: item + "?Includes=,", member: "Includes"},
				// Excludes naming no member is refused as Includes naming none is: both are comma
				// lists of member names (decisions §5), and an empty one is a client's mistake
				// (a template's empty variable), never "exclude nothing".
				{name: "excludes naming nothing", method: "GET", path: "security/users-comments?Excludes=", member: "Excludes"},
				{name: "excludes of commas only", method: "GET", path: "security/users-comments/search?Excludes=,%20,", member: "Excludes"},
				{name: "excludes naming nothing on a get", method: "GET", path: item + "?Excludes=", member: "Excludes"},
				{name: "Filter.Excludes naming nothing", method: "GET", path: "security/users-comments?Filter.Excludes=", member: "Filter.Excludes"},
				{name: "count with Filter.Excludes naming nothing", method: "GET", path: "security/users-comments/count?Filter.Excludes=", member: "Filter.Excludes"},
				{name: "excluding every member on a get", method: "GET", path: item + "?Excludes=CommentIdentifier,CommentCreatedBy,OrganizationIdentifier,UserIdentifier,CommentText,CommentCreated", member: "Excludes"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					header := []string{}
					if tt.contentType != "" {
						header = append(header, "Content-Type", tt.contentType)
					}
					res := ts.do(t, tt.method, tt.path, tt.body, header...)
					res.expect(t, tt.name, http.StatusBadRequest)
					res.problemNames(t, tt.name, tt.member)
				})
			}
			got := ts.do(t, "GET", item, "").expect(t, "get after refused changes", http.StatusOK)
			var after map[string]any
			if err := json.Unmarshal(got.body, &after); err != nil {
				t.Fatal(err)
			}
			for k, v := range stored {
				if after[k] != v {
					t.Errorf("%s = %v after refused changes, want %v", k, after[k], v)
				}
			}
			if res := ts.do(t, "GET", "security/users-comments/count?Filter.Take=5&Filter.Sort=CommentText%20desc", "").expect(t, "count", http.StatusOK); string(bytes.TrimSpace(res.body)) != `{"Count":1}` {
				t.Errorf("count after refused creates: %s, want 1", res.body)
			}
			ts.do(t, "POST", "security/users-comments", comment(""), "Content-Type", "text/plain").expect(t, "text/plain body", http.StatusUnsupportedMediaType)
		})
	}
}

// TestDuplicateKeyNamesTheSameOnBothStores: a create repeating a key names the key members,
// also when it repeats a unique constraint at once; a unique constraint alone names its members.
func TestDuplicateKeyNamesTheSameOnBothStores(t *testing.T) {
	reg := registry(t)
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			id, object, group := uuid.NewString(), uuid.NewString(), uuid.NewString()
			perm := func(id, object string) string {
				return fmt.Sprintf(`{"PermissionIdentifier":%q,"ObjectIdentifier":%q,"GroupIdentifier":%q,"AllowRead":true}`, id, object, group)
			}
			ts.do(t, "POST", "security/permissions", perm(id, object)).expect(t, "create", http.StatusCreated)
			for _, tt := range []struct {
				name, body string
				want       []string
			}{
				{name: "key", body: perm(id, uuid.NewString()), want: []string{"PermissionIdentifier"}},
				{name: "key and unique constraint", body: perm(id, object), want: []string{"PermissionIdentifier"}},
				{name: "unique constraint", body: perm(uuid.NewString(), object), want: []string{"GroupIdentifier", "ObjectIdentifier"}},
			} {
				res := ts.do(t, "POST", "security/permissions", tt.body).expect(t, tt.name, http.StatusBadRequest)
				var p struct{ Errors map[string][]string }
				if err := json.Unmarshal(res.body, &p); err != nil {
					t.Fatal(err)
				}
				var got []string
				for m := range p.Errors {
					got = append(got, m)
				}
				sort.Strings(got)
				if strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Errorf("%s: the problem %s names %v, want %v", tt.name, res.body, got, tt.want)
				}
			}
		})
	}
}

// TestRowsOutOfRangeStillRead: a datetime that an earlier version stored although its instant
// lies beyond 9999 (or before 0001) in UTC reads back as written on get, list and CSV; it
// never turns the read into a 500.
func TestRowsOutOfRangeStillRead(t *testing.T) {
	reg := registry(t)
	r := reg.MustByName("UserComment")
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b, reg)
			for _, tt := range []struct{ stored, want string }{
				{stored: "10000-01-01T01:00:00.0000000Z-02:00", want: "9999-12-31T23:00:00-02:00"},
				{stored: "0000-12-31T23:30:00.0000000Z+01:00", want: "0001-01-01T00:30:00+01:00"},
			} {
				res := ts.do(t, "POST", "security/users-comments", fmt.Sprintf(`{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q}`,
					uuid.NewString(), uuid.NewString(), uuid.NewString())).expect(t, "create", http.StatusCreated)
				var rec struct{ CommentIdentifier string }
				if err := json.Unmarshal(res.body, &rec); err != nil {
					t.Fatal(err)
				}
				// What the write path stored before it bounded instants.
				err := ts.store.DB(context.Background()).Exec("UPDATE "+ts.store.Table(r)+" SET comment_created = ? WHERE comment_identifier = ?",
					tt.stored, rec.CommentIdentifier).Error
				if err != nil {
					t.Fatal(err)
				}
				got := ts.do(t, "GET", "security/users-comments/"+rec.CommentIdentifier, "").expect(t, "get", http.StatusOK)
				if !strings.Contains(string(got.body), `"CommentCreated":"`+tt.want+`"`) {
					t.Errorf("get: %s, want CommentCreated %s", got.body, tt.want)
				}
				list := ts.do(t, "GET", "security/users-comments?Take=1000", "").expect(t, "list", http.StatusOK)
				if !strings.Contains(string(list.body), tt.want) {
					t.Errorf("list does not hold %s: %s", tt.want, list.body)
				}
				ts.do(t, "GET", "security/users-comments?Format=csv", "").expect(t, "csv", http.StatusOK)
			}
		})
	}
}

// TestBrokenBodies: a body that breaks off — a malformed chunked encoding, a client that sends
// fewer bytes than it announced and stops sending — is a client error: a 400, never a 500
// logged as a server error.
func TestBrokenBodies(t *testing.T) {
	reg := registry(t)
	b := testenv.Backends(t)[0]
	ts := newUnvalidatedTestServer(t, b, reg)
	logged := &syncWriter{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logged, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	path := "/v2/" + ts.partition + "/security/users-comments"
	send := func(raw string, closeEarly bool) string {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, raw); err != nil {
			t.Fatal(err)
		}
		if closeEarly {
			conn.(*net.TCPConn).CloseWrite()
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, _ := bufio.NewReader(conn).ReadString('\n')
		return line
	}
	chunked := "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"zz\r\n{}\r\n0\r\n\r\n"
	if line := send(chunked, false); !strings.Contains(line, " 400 ") {
		t.Errorf("malformed chunked encoding: %q, want a 400", line)
	}
	short := "PATCH " + path + "/" + uuid.NewString() + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"CommentText\""
	// The client half-closes: it still reads, and must not be told 200.
	if line := send(short, true); !strings.Contains(line, " 400 ") {
		t.Errorf("body cut short: %q, want a 400", line)
	}
	if strings.Contains(logged.String(), "request failed") || strings.Contains(logged.String(), "status=500") {
		t.Errorf("a broken body was logged as a server error:\n%s", logged.String())
	}
}

// syncWriter lets the server's goroutines log into one buffer.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestManyProblemsAreCapped: a request of thousands of unknown parameters or members is a 400
// naming the first problemdoc.MaxMembers of them and counting the rest; it was answered with a
// document twenty times the request's size (each message names the parameters allowed).
func TestManyProblemsAreCapped(t *testing.T) {
	reg := registry(t)
	ts := newTestServer(t, testenv.Backends(t)[0], reg)
	var query, body strings.Builder
	// The body gives the required members, so that its problems are the unknown names alone.
	fmt.Fprintf(&body, `{"CommentText":"x","CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q`,
		uuid.NewString(), uuid.NewString(), uuid.NewString())
	for i := range 2000 {
		fmt.Fprintf(&query, "&Unknown%04d=1", i)
		fmt.Fprintf(&body, `,"Unknown%04d":1`, i)
	}
	body.WriteString("}")
	for _, c := range []struct{ method, path, body string }{
		{"GET", "security/users-comments?" + query.String()[1:], ""},
		{"POST", "security/users-comments", body.String()},
	} {
		res := ts.do(t, c.method, c.path, c.body).expect(t, c.method+" with 2,000 unknown names", http.StatusBadRequest)
		var p struct {
			Detail string
			Errors map[string][]string
		}
		if err := json.Unmarshal(res.body, &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Errors) != problemdoc.MaxMembers || p.Errors["Unknown0000"] == nil ||
			!strings.Contains(p.Detail, fmt.Sprintf("and problems with %d more", 2000-problemdoc.MaxMembers)) {
			t.Errorf("%s: %d members named (Unknown0000 %v), detail %.200q; want the first %d and the count of the rest",
				c.method, len(p.Errors), p.Errors["Unknown0000"], p.Detail, problemdoc.MaxMembers)
		}
		if len(res.body) > 40<<10 {
			t.Errorf("%s: a problem document of %d bytes", c.method, len(res.body))
		}
	}
}
