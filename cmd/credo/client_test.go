package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"credo/engine"
	"credo/handlers/idempotency"
	"credo/internal/apiclient"
	"credo/internal/groupsuite"
	"credo/internal/testenv"
)

// TestGeneratedClientRoundTrip drives the Go client that oapi-codegen generates from the
// document (internal/apiclient, kept current by TestGeneratedClientIsCurrent) against a wired
// server: a token from a client secret, then in every record group each of create, get, list
// with a filter, a PATCH of one member and delete that the group offers. The PATCH must send
// only that member and leave every other one as it was.
func TestGeneratedClientRoundTrip(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := startServer(t, b)
			ctx := context.Background()
			code, out, stderr := cli(t, "secret", "create", "--database", b.URL, "--partition", s.partition, "--operator", "--email", "client@example.com", "--json")
			if code != 0 {
				t.Fatalf("secret create: %d %s", code, stderr)
			}
			var secret struct{ Secret, OrganizationIdentifier string }
			if err := json.Unmarshal([]byte(out), &secret); err != nil {
				t.Fatal(err)
			}
			anonymous, err := apiclient.NewClientWithResponses(s.url)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := anonymous.GenerateTokenWithResponse(ctx, s.partition, apiclient.GenerateTokenJSONRequestBody{
				Secret: nullable.NewNullableWithValue(secret.Secret), Lifetime: nullable.NewNullableWithValue(3600)})
			if err != nil || tok.JSON200 == nil || tok.JSON200.TokenType != "Bearer" {
				t.Fatalf("generate a token: %v %s", err, body(tok))
			}
			sent := &sentBodies{}
			c, err := apiclient.NewClientWithResponses(s.url, apiclient.WithRequestEditorFn(
				func(_ context.Context, req *http.Request) error {
					req.Header.Set("Authorization", "Bearer "+tok.JSON200.AccessToken)
					return sent.keep(req)
				}))
			if err != nil {
				t.Fatal(err)
			}
			reg, err := (&config{}).registry()
			if err != nil {
				t.Fatal(err)
			}
			rt := &roundTrip{c: reflect.ValueOf(c), partition: s.partition, org: secret.OrganizationIdentifier, sent: sent, db: s.db}
			for _, r := range reg.Public() {
				t.Run(r.Path, func(t *testing.T) { rt.group(t, r) })
			}
		})
	}
}

// roundTrip calls the generated client's methods for a group by their names.
type roundTrip struct {
	c         reflect.Value
	partition string
	org       string
	sent      *sentBodies
	db        *engine.Database
}

// sentBodies keeps the body of the last request the client sent.
type sentBodies struct {
	mu   sync.Mutex
	last []byte
}

func (s *sentBodies) keep(req *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = nil
	if req.GetBody == nil {
		return nil
	}
	rd, err := req.GetBody()
	if err != nil {
		return err
	}
	s.last, err = io.ReadAll(rd)
	return err
}

func (s *sentBodies) lastBody() []byte { s.mu.Lock(); defer s.mu.Unlock(); return s.last }

func (rt *roundTrip) group(t *testing.T, r *engine.Resource) {
	ctx := context.Background()
	want := rt.sample(r, 1)
	var created map[string]any
	if r.Offers(engine.OpCreate) {
		// With an Idempotency-Key, which the generated client sends from its params: the
		// retry gets the first answer, marked replayed.
		name := "Create" + r.Name + "WithResponse"
		create := rt.method(t, name).Type()
		params := reflect.New(create.In(2).Elem())
		key := "round trip " + r.Name
		params.Elem().FieldByName("IdempotencyKey").Set(reflect.ValueOf(&key))
		body := typed(t, create.In(3), want)
		res := rt.call(t, name, ctx, rt.partition, params.Interface(), body)
		created = rt.expect(t, "create", res, http.StatusCreated, "JSON201")
		again := rt.call(t, name, ctx, rt.partition, params.Interface(), body)
		rt.expect(t, "create retried", again, http.StatusCreated, "JSON201")
		if replayed := again.Elem().FieldByName("HTTPResponse").Interface().(*http.Response).Header.Get(idempotency.ReplayedHeader); replayed != "true" ||
			!bytes.Equal(again.Elem().FieldByName("Body").Bytes(), res.Elem().FieldByName("Body").Bytes()) {
			t.Errorf("create retried with its key: %s %q, not the first answer replayed", idempotency.ReplayedHeader, replayed)
		}
	} else {
		st, _ := rt.db.Store(rt.partition)
		b, _ := json.Marshal(want)
		rec, err := testenv.CreateJSON(ctx, st, r, b, engine.AllOrganizations())
		if err != nil {
			t.Fatalf("load a %s: %v", r.Name, err)
		}
		_ = json.Unmarshal(engine.AppendJSON(nil, rec, r.Output), &created)
	}
	for name, v := range want {
		if f, _ := r.Member(name); f.WriteOnly {
			if _, ok := created[name]; ok {
				t.Errorf("created %s carries the write-only %s", r.Name, name)
			}
			continue
		}
		if fmt.Sprint(created[name]) != fmt.Sprint(v) {
			t.Errorf("created %s = %v, want %v", name, created[name], v)
		}
	}
	keys := make([]any, len(r.Key))
	for i, k := range r.Key {
		keys[i] = uuid.MustParse(created[k.Name].(string))
	}
	get := func() (*reflect.Value, map[string]any) {
		m := rt.method(t, "Get"+r.Name+"WithResponse")
		args := append([]any{ctx, rt.partition}, keys...)
		args = append(args, reflect.Zero(m.Type().In(len(args))).Interface())
		res := rt.call(t, "Get"+r.Name+"WithResponse", args...)
		return &res, rt.record(t, res)
	}
	// ifMatch returns the write parameters of method with If-Match set to the record's ETag
	// as a get answers it (none where the group offers no get): the conditional write a client
	// makes to change only the version it read.
	ifMatch := func(method string, args int) (any, string) {
		params := reflect.New(rt.method(t, method).Type().In(args).Elem())
		if !r.Offers(engine.OpGet) {
			return params.Interface(), ""
		}
		res, _ := get()
		tag := etagOf(*res)
		params.Elem().FieldByName("IfMatch").Set(reflect.ValueOf(&tag))
		return params.Interface(), tag
	}
	if r.Offers(engine.OpGet) {
		res, got := get()
		rt.expect(t, "get", *res, http.StatusOK, "JSON200")
		if mustMarshal(got) != mustMarshal(created) {
			t.Errorf("get: %v, want %v", got, created)
		}
		if etagOf(*res) == "" {
			t.Error("get answered no ETag")
		}
	}
	if r.Offers(engine.OpList) {
		filter := map[string]any{"Identifier": created[r.Key[0].Name]}
		for _, f := range r.Filters {
			v := created[f.Field.Name]
			if f.Field.Stored() && !f.Field.Key && v != nil && (f.Op == engine.MatchEq || f.Op == engine.MatchContains) {
				filter[f.Param] = v
				break
			}
		}
		m := rt.method(t, "List"+r.Name+"WithResponse")
		params := reflect.New(m.Type().In(2).Elem())
		if err := json.Unmarshal([]byte(mustMarshal(filter)), params.Interface()); err != nil {
			t.Fatalf("list parameters %v: %v", filter, err)
		}
		res := rt.call(t, "List"+r.Name+"WithResponse", ctx, rt.partition, params.Interface())
		rt.expect(t, "list", res, http.StatusOK, "JSON200")
		var recs []map[string]any
		_ = json.Unmarshal(res.Elem().FieldByName("Body").Bytes(), &recs)
		if len(recs) != 1 || mustMarshal(recs[0]) != mustMarshal(created) {
			t.Errorf("list with %v: %v, want the record", filter, recs)
		}
	}
	if r.Offers(engine.OpPatch) {
		member := patchable(r)
		if member == nil {
			t.Fatalf("%s offers PATCH but has no member to patch", r.Name)
		}
		values := []any{groupsuite.SampleValue(member, 7)}
		if member.Nullable {
			values = append(values, nil) // then clear it: Nullable sends an explicit null
		}
		for _, value := range values {
			name := "Patch" + r.Name + "WithApplicationMergePatchPlusJSONBodyWithResponse"
			m := rt.method(t, name)
			args := append([]any{ctx, rt.partition}, keys...)
			params, read := ifMatch(name, len(args))
			patch := typed(t, m.Type().In(len(args)+1), map[string]any{member.Name: value})
			res := rt.call(t, name, append(args, params, patch)...)
			rt.expect(t, "patch", res, http.StatusOK, "")
			if tag := etagOf(res); tag == "" || tag == read {
				t.Errorf("patch with If-Match %s answered the ETag %q", read, tag)
			}
			if want := mustMarshal(map[string]any{member.Name: value}); string(rt.sent.lastBody()) != want {
				t.Errorf("patch sent %s, want only %s", rt.sent.lastBody(), want)
			}
			_, after := get()
			for k, v := range created {
				if f, _ := r.Member(k); f != nil && f.ReadOnly {
					// The server's: a write may set it anew (a permission's PermissionGranted
					// is the time of the write; security's TestGrantRecordsItsGrantor).
					continue
				}
				if k == member.Name {
					v = value
				}
				if fmt.Sprint(after[k]) != fmt.Sprint(v) {
					t.Errorf("after patching %s to %v: %s = %v, want %v", member.Name, value, k, after[k], v)
				}
			}
		}
	}
	if r.Offers(engine.OpDelete) {
		args := append([]any{ctx, rt.partition}, keys...)
		params, _ := ifMatch("Delete"+r.Name+"WithResponse", len(args))
		res := rt.call(t, "Delete"+r.Name+"WithResponse", append(args, params)...)
		rt.expect(t, "delete", res, http.StatusOK, "")
		if res, _ := get(); statusOf(*res) != http.StatusNotFound {
			t.Errorf("get after delete: %d, want 404", statusOf(*res))
		}
	}
}

// patchable is the member a PATCH changes: the first nullable writable member that is not a
// key (CommentText, say), else the first writable one.
func patchable(r *engine.Resource) *engine.Field {
	var first *engine.Field
	for _, f := range r.Fields {
		if f.Key || f.ReadOnly {
			continue
		}
		if f.Nullable {
			return f
		}
		if first == nil {
			first = f
		}
	}
	return first
}

func (rt *roundTrip) method(t *testing.T, name string) reflect.Value {
	t.Helper()
	m := rt.c.MethodByName(name)
	if !m.IsValid() {
		t.Fatalf("the generated client has no method %s", name)
	}
	return m
}

// call calls a client method and returns its response (a pointer), failing on a transport error.
func (rt *roundTrip) call(t *testing.T, name string, args ...any) reflect.Value {
	t.Helper()
	m := rt.method(t, name)
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		in[i] = reflect.ValueOf(a)
		if a == nil {
			in[i] = reflect.Zero(m.Type().In(i))
		}
	}
	out := m.Call(in)
	if err, _ := out[1].Interface().(error); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out[0]
}

// expect checks a response's status and, when field is set, that the client decoded its body
// into that typed member; it returns the body's members.
func (rt *roundTrip) expect(t *testing.T, what string, res reflect.Value, status int, field string) map[string]any {
	t.Helper()
	if got := statusOf(res); got != status {
		t.Fatalf("%s: status %d, want %d: %s", what, got, status, res.Elem().FieldByName("Body").Bytes())
	}
	if field != "" && res.Elem().FieldByName(field).IsNil() {
		t.Fatalf("%s: the client did not decode %s", what, field)
	}
	return rt.record(t, res)
}

func (rt *roundTrip) record(t *testing.T, res reflect.Value) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(res.Elem().FieldByName("Body").Bytes(), &m)
	return m
}

// etagOf is the ETag header of a response.
func etagOf(res reflect.Value) string {
	return res.Elem().FieldByName("HTTPResponse").Interface().(*http.Response).Header.Get("ETag")
}

func statusOf(res reflect.Value) int {
	return res.MethodByName("StatusCode").Call(nil)[0].Interface().(int)
}

// typed converts members into a value of the generated type t through JSON, as a caller
// filling the generated struct would.
func typed(t *testing.T, typ reflect.Type, members map[string]any) any {
	t.Helper()
	v := reflect.New(typ)
	if err := json.Unmarshal([]byte(mustMarshal(members)), v.Interface()); err != nil {
		t.Fatalf("%s from %v: %v", typ, members, err)
	}
	return v.Elem().Interface()
}

// sample returns values for the writable members of r, distinct per n; scoped groups get the
// caller's organization.
func (rt *roundTrip) sample(r *engine.Resource, n int) map[string]any {
	out := map[string]any{}
	for _, f := range r.Fields {
		if !f.ReadOnly {
			out[f.Name] = groupsuite.SampleValue(f, n)
		}
	}
	if _, ok := out["OrganizationIdentifier"]; ok {
		out["OrganizationIdentifier"] = rt.org
	}
	return out
}

// body is a response's body for messages.
func body(res interface{ StatusCode() int }) string {
	if res == nil || reflect.ValueOf(res).IsNil() {
		return "no response"
	}
	return fmt.Sprintf("%d %s", res.StatusCode(), bytes.TrimSpace(reflect.ValueOf(res).Elem().FieldByName("Body").Bytes()))
}
