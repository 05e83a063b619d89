package idempotency_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"credo/handlers/idempotency"
	"credo/internal/testauth"
	"credo/internal/testenv"
)

// replica is a second server on s's database and partition, with a keeper of its own on s's
// clock: another process of the same deployment.
func (s *server) replica(t *testing.T) *server {
	t.Helper()
	reg := loadRegistry(t)
	k, err := idempotency.New(reg, idempotency.Config{Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ts, metrics := serve(t, reg, s.db, testauth.AllowAll{}, k)
	return &server{Server: ts, partition: s.partition, store: s.store, db: s.db, keeper: k, clock: s.clock, metrics: metrics}
}

// together sends n requests with key at once, alternately to each server, and returns the
// answers.
func together(t *testing.T, n int, key, body string, servers ...*server) []answer {
	t.Helper()
	answers, errs := make([]answer, n), make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i], errs[i] = servers[i%len(servers)].send(comments, body, idempotency.KeyHeader, key)
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return answers
}

// TestReplicasAtLeaseEnd: two servers on one database, and 20 retries of one key sent at
// once to both, at the instant the first request's lease ends.
//   - The first request's process stopped after its work committed: every retry is its
//     record, replayed, the same body and ETag, and no retry creates another.
//   - The first request's process died before its work: exactly one retry does the work,
//     the others get its answer replayed or a 409 with Retry-After, and one record exists.
func TestReplicasAtLeaseEnd(t *testing.T) {
	const clients = 20
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			a := newServer(t, b)
			r := a.replica(t)

			a.stop.Store(true)
			if first := a.post(t, comments, comment("stopped"), idempotency.KeyHeader, "stopped"); first.status != http.StatusInternalServerError {
				t.Fatalf("the stopped request: %d %s", first.status, first.body)
			}
			a.stop.Store(false)
			a.clock.Advance(idempotency.Lease)
			var body, etag string
			var replay answer
			for i, got := range together(t, clients, "stopped", comment("stopped"), a, r) {
				replay = got
				if got.status != http.StatusCreated || got.header.Get(idempotency.ReplayedHeader) != "true" {
					t.Fatalf("retry %d of the stopped request: %d %v %s", i, got.status, got.header, got.body)
				}
				if body == "" {
					body, etag = got.body, got.header.Get("ETag")
				} else if got.body != body || got.header.Get("ETag") != etag {
					t.Fatalf("retry %d: %s %s, another retry %s %s", i, got.header.Get("ETag"), got.body, etag, body)
				}
			}
			if n := a.count(t, "UserComment"); n != 1 {
				t.Fatalf("%d records after the retries of the stopped request, want 1", n)
			}
			// Each is the answer a create gives (Location, ETag, Content-Type, Vary) of the record
			// a get of its Location reads.
			got := r.get(t, replay.header.Get("Location"))
			for _, h := range []string{"ETag", "Content-Type", "Vary"} {
				if got.header.Get(h) == "" || replay.header.Get(h) != got.header.Get(h) {
					t.Errorf("the replay's %s %q, the get's %q", h, replay.header.Get(h), got.header.Get(h))
				}
			}
			if got.status != http.StatusOK || got.body != replay.body {
				t.Fatalf("get %s: %d %s; the replay %s", replay.header.Get("Location"), got.status, got.body, replay.body)
			}

			req := httptest.NewRequest(http.MethodPost, "/v2/"+a.partition+"/"+comments, nil)
			a.keeper.Abandon(t, a.store, defaultUser, "died", req, comment("died"))
			a.clock.Advance(idempotency.Lease + time.Second)
			created, replayed, inFlight := 0, 0, 0
			body = ""
			for i, got := range together(t, clients, "died", comment("died"), a, r) {
				switch {
				case got.status == http.StatusCreated && got.header.Get(idempotency.ReplayedHeader) == "true":
					replayed++
				case got.status == http.StatusCreated:
					created++
				case got.status == http.StatusConflict && got.header.Get("Retry-After") != "":
					inFlight++
					continue
				default:
					t.Fatalf("retry %d of the abandoned request: %d %v %s", i, got.status, got.header, got.body)
				}
				if body != "" && got.body != body {
					t.Fatalf("two different 201 answers: %s and %s", body, got.body)
				}
				body = got.body
			}
			if created != 1 {
				t.Fatalf("%d retries did the work (%d replayed, %d in flight), want exactly 1", created, replayed, inFlight)
			}
			if n := a.count(t, "UserComment"); n != 2 {
				t.Fatalf("%d records after the retries of the abandoned request, want 2 (one each)", n)
			}
			for _, s := range []*server{a, r} {
				if again := s.post(t, comments, comment("died"), idempotency.KeyHeader, "died"); again.body != body ||
					again.header.Get(idempotency.ReplayedHeader) != "true" {
					t.Fatalf("the retry after them: %d %s, want %s", again.status, again.body, body)
				}
			}
			t.Logf("%d retries of an abandoned key on two servers: 1 created, %d replayed, %d in flight", clients, replayed, inFlight)
		})
	}
}

// TestRefusedInWork: a create refused inside its work's transaction (its INSERT finds its key
// another record's: a 400 naming CommentIdentifier) marks nothing: its key is given up, and the same request, retried once
// the other record is gone, is served afresh and creates the record.
func TestRefusedInWork(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := newServer(t, b)
			const id = "0190a6f0-0000-7000-8000-0000000000c1"
			body := `{"CommentIdentifier":"` + id + `",` + comment("taken")[1:]
			if first := s.post(t, comments, body); first.status != http.StatusCreated {
				t.Fatalf("the first create: %d %s", first.status, first.body)
			}
			refused := s.post(t, comments, body, idempotency.KeyHeader, "refused")
			if refused.status != http.StatusBadRequest || refused.header.Get("Retry-After") != "" {
				t.Fatalf("the create of a taken key: %d %v %s", refused.status, refused.header, refused.body)
			}
			if got := s.delete(t, comments+"/"+id); got.status != http.StatusOK {
				t.Fatalf("delete: %d %s", got.status, got.body)
			}
			again := s.post(t, comments, body, idempotency.KeyHeader, "refused")
			if again.status != http.StatusCreated || again.header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("the retry once the key is free: %d %v %s", again.status, again.header, again.body)
			}
			if n := s.count(t, "UserComment"); n != 1 {
				t.Fatalf("%d records, want 1", n)
			}
		})
	}
}

// delete deletes path (under the partition) as the default caller.
func (s *server) delete(t *testing.T, path string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, s.URL+"/v2/"+s.partition+"/"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: string(b)}
}
