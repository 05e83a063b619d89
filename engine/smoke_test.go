package engine_test

import (
	"context"
	"net/url"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
	"credo/resources"
)

func TestSmoke(t *testing.T) {
	reg, err := engine.Load(resources.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			p := testenv.Partition(t)
			db, err := engine.Open(ctx, b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s, _ := db.Store(p)
			r := reg.MustByName("UserComment")
			rec, err := s.Create(ctx, r, []byte(`{"CommentCreatedBy":"0190a6f0-0000-7000-8000-000000000001","OrganizationIdentifier":"0190a6f0-0000-7000-8000-000000000002","UserIdentifier":"0190a6f0-0000-7000-8000-000000000003","CommentText":"Hello <b>","CommentCreated":"2024-03-10T14:30:00.1234567-06:00"}`), "")
			if err != nil {
				t.Fatal(err)
			}
			t.Log(string(engine.AppendJSON(nil, rec, r.Output)))
			key := []any{rec.Get(r, "CommentIdentifier")}
			got, err := s.Get(ctx, r, key, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			t.Log(string(engine.AppendJSON(nil, got, r.Output)))
			q, err := r.ParseQuery(url.Values{"CommentText": {"hello"}, "CommentCreated": {"2024-03-10T20:30:00.1234567Z"}}, engine.KindList)
			if err != nil {
				t.Fatal(err)
			}
			recs, total, err := s.List(ctx, r, q)
			t.Log(len(recs), total, err)
			sqlText, vars := s.ListSQL(r, q)
			t.Log(sqlText, vars)
			if err := s.Patch(ctx, r, key, []byte(`{"CommentText":null}`), ""); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(ctx, r, key, []byte(`{"CommentCreatedBy":"0190a6f0-0000-7000-8000-000000000001","OrganizationIdentifier":"0190a6f0-0000-7000-8000-000000000002","UserIdentifier":"0190a6f0-0000-7000-8000-000000000003"}`), ""); err != nil {
				t.Fatal(err)
			}
			got, _ = s.Get(ctx, r, key, nil, "")
			t.Log(string(engine.AppendJSON(nil, got, r.Output)))
			ok, err := s.Exists(ctx, r, key, "")
			t.Log(ok, err)
			if err := s.Delete(ctx, r, key, ""); err != nil {
				t.Fatal(err)
			}
			err = s.Delete(ctx, r, key, "")
			t.Log(err, engine.IsNotFound(err))
		})
	}
}
