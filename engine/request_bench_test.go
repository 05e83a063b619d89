package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"

	"credo/engine"
	"credo/handlers/request"
	"credo/internal/testenv"
	"credo/resources"
)

// The request path of the engine, stage by stage (parse query → build SQL → scan → encode)
// and per verb against a real store of benchRows comments. Run with
//
//	go test -run '^$' -bench . -benchmem ./engine/
//
// (CREDO_TEST_POSTGRES adds the PostgreSQL cases). They never run in the normal test suite.

// benchRows is the size of the comments table the verb benchmarks read.
const benchRows = 10_000

// benchUsers is how many users the comments are spread over (100 comments per user, as in
// the harness of bench/).
const benchUsers = 100

type benchData struct {
	reg   *engine.Registry
	r     *engine.Resource
	ids   []string
	pairs [][2]string
}

func benchRegistry(b *testing.B) (*engine.Registry, *engine.Resource) {
	b.Helper()
	reg, err := engine.Load(resources.FS)
	if err != nil {
		b.Fatal(err)
	}
	return reg, reg.MustByName("UserComment")
}

// benchStore opens a fresh partition of backend and fills it with benchRows comments.
func benchStore(b *testing.B, be testenv.Backend) (*engine.Store, *benchData) {
	b.Helper()
	reg, r := benchRegistry(b)
	p := testenv.Partition(b)
	db, err := engine.Open(context.Background(), be.URL, []string{p}, reg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, _ := db.Store(p)
	c := testenv.SeedComments(b, s, benchRows, benchUsers)
	return s, &benchData{reg: reg, r: r, ids: c.IDs, pairs: c.Pairs}
}

// w2Values are the list parameters of the harness's W2 case.
func w2Values(pair [2]string) url.Values {
	return url.Values{"OrganizationIdentifier": {pair[0]}, "UserIdentifier": {pair[1]}, "Take": {"20"}, "Sort": {"CommentCreated desc"}}
}

func BenchmarkParseQuery(b *testing.B) {
	_, r := benchRegistry(b)
	values := w2Values([2]string{"0190a6f0-0000-7000-8000-00000000000a", "0190a6f0-0000-7000-8000-00000000000b"})
	b.Run("list", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := request.ListQuery(r, values, request.KindList); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("count", func(b *testing.B) {
		v := url.Values{"OrganizationIdentifier": values["OrganizationIdentifier"]}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := request.ListQuery(r, v, request.KindCount); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.ParseKey([]string{"0190a6f0-0000-7000-8000-00000000000a"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBuildSQL renders the list and count statements (GORM dry run), as every request does.
func BenchmarkBuildSQL(b *testing.B) {
	reg, r := benchRegistry(b)
	db, err := engine.Open(context.Background(), "sqlite:"+b.TempDir(), []string{"e01"}, reg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, _ := db.Store("e01")
	q, err := request.ListQuery(r, w2Values([2]string{"0190a6f0-0000-7000-8000-00000000000a", "0190a6f0-0000-7000-8000-00000000000b"}), request.KindList)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("list", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.ListSQL(r, q, engine.AllOrganizations())
		}
	})
	b.Run("count", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.CountSQL(r, q, engine.AllOrganizations())
		}
	})
}

func BenchmarkDecodeBody(b *testing.B) {
	_, r := benchRegistry(b)
	body := []byte(`{"CommentCreatedBy":"0190a6f0-0000-7000-8000-00000000000c","OrganizationIdentifier":"0190a6f0-0000-7000-8000-00000000000a","UserIdentifier":"0190a6f0-0000-7000-8000-00000000000b","CommentText":"bench create"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.DecodeDraft(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	_, r := benchRegistry(b)
	d, err := r.DecodeDraft([]byte(`{"CommentIdentifier":"0190a6f0-0000-7000-8000-00000000000d","CommentCreatedBy":"0190a6f0-0000-7000-8000-00000000000c","OrganizationIdentifier":"0190a6f0-0000-7000-8000-00000000000a","UserIdentifier":"0190a6f0-0000-7000-8000-00000000000b","CommentText":"the learner completed the module","CommentCreated":"2025-03-10T14:30:00.123-05:00"}`))
	if err != nil {
		b.Fatal(err)
	}
	rec := d.Record()
	b.Run("json", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			buf = engine.AppendJSON(buf[:0], rec, r.Output)
		}
	})
	b.Run("storage-datetime", func(b *testing.B) {
		stored := "2025-03-10T19:30:00.1230000Z-05:00"
		b.ReportAllocs()
		for b.Loop() {
			if _, err := engine.ParseStorage(stored); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStore runs each verb of the harness's cases through the store: W1 Get, W2 List
// (page and count), W3 Count, W4 Create.
func BenchmarkStore(b *testing.B) {
	for _, be := range testenv.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			s, d := benchStore(b, be)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(3, 4))
			b.Run("Get", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.Get(ctx, d.r, []any{d.ids[rng.IntN(len(d.ids))]}, nil, engine.AllOrganizations()); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("List", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					q, err := request.ListQuery(d.r, w2Values(d.pairs[rng.IntN(len(d.pairs))]), request.KindList)
					if err != nil {
						b.Fatal(err)
					}
					if _, _, err := s.List(ctx, d.r, q, engine.AllOrganizations()); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("Count", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					q, err := request.ListQuery(d.r, url.Values{"OrganizationIdentifier": {d.pairs[rng.IntN(len(d.pairs))][0]}}, request.KindCount)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.Count(ctx, d.r, q, engine.AllOrganizations()); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("Create", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					pair := d.pairs[rng.IntN(len(d.pairs))]
					body := fmt.Appendf(nil, `{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"bench create"}`, pair[1], pair[0], pair[1])
					if _, err := testenv.CreateJSON(ctx, s, d.r, body, engine.AllOrganizations()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
