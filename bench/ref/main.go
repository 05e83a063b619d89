// Command ref is the "no engine" baseline of the benchmarks: a minimal net/http server that
// answers the benchmark's requests on credo's own tables with hand-written, prepared
// statements (pgx pool on PostgreSQL, database/sql on SQLite) and the same response bodies,
// but without descriptors, GORM, the router, authentication or authorization. `credo-ref load`
// is the raw bulk insert (COPY; batched prepared INSERTs on SQLite) that `credo load` is
// measured against.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Pool sizes, as credo's engine sets them.
const (
	postgresMaxConns = 32
	sqliteMaxConns   = 8
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("ref: ")
	if len(os.Args) > 1 && os.Args[1] == "load" {
		mainLoad(os.Args[2:])
		return
	}
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	database := flag.String("database", "", "postgres://… or sqlite:DIR, as credo serve --database")
	partitions := flag.String("partitions", "bench", "comma-separated partitions")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	parts := strings.Split(*partitions, ",")
	var st store
	var err error
	if dir, ok := strings.CutPrefix(*database, "sqlite:"); ok {
		st, err = openSQLite(dir, parts, sqliteMaxConns)
	} else {
		st, err = openPostgres(ctx, *database, parts, postgresMaxConns)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer st.close()
	s := &server{st: st, parts: map[string]bool{}}
	for _, p := range parts {
		s.parts[p] = true
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// mainLoad is `credo-ref load --database D --partition P FILE` (see load).
func mainLoad(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	database := fs.String("database", "", "postgres://… or sqlite:DIR, as credo load --database")
	partition := fs.String("partition", "", "partition whose users_comments table receives the rows")
	_ = fs.Parse(args)
	if fs.NArg() != 1 || *database == "" || *partition == "" {
		log.Fatal("usage: credo-ref load --database D --partition P FILE")
	}
	start := time.Now()
	n, err := load(context.Background(), *database, *partition, fs.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("loaded %d rows in %v", n, time.Since(start).Round(time.Millisecond))
}

type server struct {
	st    store
	parts map[string]bool
}

const comments = "/v2/{p}/security/users-comments"

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/{p}/platform/health", s.health)
	mux.HandleFunc("GET "+comments+"/{id}", s.get)
	mux.HandleFunc("GET "+comments+"/count", s.count)
	mux.HandleFunc("GET "+comments, s.list)
	mux.HandleFunc("POST "+comments, s.create)
	mux.HandleFunc("GET /v2/{p}/progress/gradebooks/export", s.export)
	mux.HandleFunc("GET /v2/{p}/progress/gradebooks", s.export)
	return mux
}

// partition returns the request's partition, answering 404 for an unknown one.
func (s *server) partition(w http.ResponseWriter, r *http.Request) (string, bool) {
	p := r.PathValue("p")
	if !s.parts[p] {
		fail(w, http.StatusNotFound, "no such partition")
		return "", false
	}
	return p, true
}

func fail(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"Title":%q,"Status":%d,"Detail":%q}`+"\n", http.StatusText(status), status, detail)
}

func failErr(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return
	}
	log.Printf("%s %s: %v", r.Method, r.URL.Path, err)
	fail(w, http.StatusInternalServerError, "unexpected error")
}

func (s *server) health(w http.ResponseWriter, r *http.Request) {
	p, ok := s.partition(w, r)
	if !ok {
		return
	}
	if err := s.st.ping(r.Context(), p); err != nil {
		fail(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, []byte(`{"Status":"OK","Database":"ok"}`))
}

// writeJSON declares the body's length, as credo does: net/http would otherwise send a body
// larger than its 2 KiB buffer in chunks, in one more write to the connection.
func writeJSON(w http.ResponseWriter, status int, b []byte) {
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// appendComment renders a comment as credo's UserComment record.
func appendComment(b []byte, c *comment) ([]byte, error) {
	b = append(b, `{"CommentIdentifier":`...)
	b = appendString(b, c.ID)
	b = append(b, `,"CommentCreatedBy":`...)
	b = appendString(b, c.CreatedBy)
	b = append(b, `,"OrganizationIdentifier":`...)
	b = appendString(b, c.Org)
	b = append(b, `,"UserIdentifier":`...)
	b = appendString(b, c.User)
	b = append(b, `,"CommentText":`...)
	if c.Text.Valid {
		b = appendString(b, c.Text.String)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"CommentCreated":"`...)
	b, err := appendOutput(b, c.Created)
	return append(b, `"}`...), err
}

func (s *server) get(w http.ResponseWriter, r *http.Request) {
	p, ok := s.partition(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if !validUUID(id) {
		fail(w, http.StatusNotFound, "The record does not exist.")
		return
	}
	c, err := s.st.get(r.Context(), p, strings.ToLower(id))
	if errors.Is(err, errNotFound) {
		fail(w, http.StatusNotFound, "The record does not exist.")
		return
	}
	if err != nil {
		failErr(w, r, err)
		return
	}
	b, err := appendComment(make([]byte, 0, 512), &c)
	if err != nil {
		failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// uuidParam reads a required uuid query parameter.
func uuidParam(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	v := r.URL.Query().Get(name)
	if !validUUID(v) {
		fail(w, http.StatusBadRequest, name+" must be a UUID")
		return "", false
	}
	return strings.ToLower(v), true
}

func (s *server) count(w http.ResponseWriter, r *http.Request) {
	p, ok := s.partition(w, r)
	if !ok {
		return
	}
	org, ok := uuidParam(w, r, "OrganizationIdentifier")
	if !ok {
		return
	}
	n, err := s.st.count(r.Context(), p, org, "")
	if err != nil {
		failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, append(strconv.AppendInt([]byte(`{"Count":`), n, 10), '}'))
}

// list answers the one list the benchmark sends: OrganizationIdentifier and UserIdentifier
// filters, Take, Sort=CommentCreated desc; with the pagination header credo sends.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	p, ok := s.partition(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if q.Get("Sort") != "CommentCreated desc" {
		fail(w, http.StatusBadRequest, "this server only sorts by CommentCreated desc")
		return
	}
	org, ok := uuidParam(w, r, "OrganizationIdentifier")
	if !ok {
		return
	}
	user, ok := uuidParam(w, r, "UserIdentifier")
	if !ok {
		return
	}
	take := 20
	if v := q.Get("Take"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			fail(w, http.StatusBadRequest, "Take must be 1 to 1000")
			return
		}
		take = n
	}
	b := make([]byte, 0, 256*take+2)
	b = append(b, '[')
	n := 0
	err := s.st.list(r.Context(), p, org, user, take, func(c *comment) error {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		var err error
		b, err = appendComment(b, c)
		return err
	})
	if err != nil {
		failErr(w, r, err)
		return
	}
	b = append(b, ']')
	total := int64(n)
	if n == take {
		if total, err = s.st.count(r.Context(), p, org, user); err != nil {
			failErr(w, r, err)
			return
		}
	}
	w.Header().Set("X-Query-Pagination", fmt.Sprintf(`{"Page":1,"PageSize":%d,"TotalCount":%d}`, take, total))
	writeJSON(w, http.StatusOK, b)
}

// commentBody is a create body; unknown members are refused as credo does.
type commentBody struct {
	CommentIdentifier      *string
	CommentCreatedBy       string
	OrganizationIdentifier string
	UserIdentifier         string
	CommentText            *string
	CommentCreated         *string
}

func (s *server) create(w http.ResponseWriter, r *http.Request) {
	p, ok := s.partition(w, r)
	if !ok {
		return
	}
	var in commentBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	if in.CommentIdentifier != nil || in.CommentCreated != nil {
		fail(w, http.StatusBadRequest, "this server takes neither CommentIdentifier nor CommentCreated")
		return
	}
	for _, v := range []string{in.CommentCreatedBy, in.OrganizationIdentifier, in.UserIdentifier} {
		if !validUUID(v) {
			fail(w, http.StatusBadRequest, "CommentCreatedBy, OrganizationIdentifier and UserIdentifier must be UUIDs")
			return
		}
	}
	c := comment{ID: newV7(), CreatedBy: strings.ToLower(in.CommentCreatedBy), Org: strings.ToLower(in.OrganizationIdentifier),
		User: strings.ToLower(in.UserIdentifier), Created: storedNow()}
	if in.CommentText != nil {
		if len([]rune(*in.CommentText)) > 4000 {
			fail(w, http.StatusBadRequest, "CommentText is too long")
			return
		}
		c.Text.String, c.Text.Valid = *in.CommentText, true
	}
	if err := s.st.insert(r.Context(), p, &c); err != nil {
		if errors.Is(err, errConflict) {
			fail(w, http.StatusBadRequest, "duplicate CommentIdentifier")
			return
		}
		failErr(w, r, err)
		return
	}
	b, err := appendComment(make([]byte, 0, 512), &c)
	if err != nil {
		failErr(w, r, err)
		return
	}
	w.Header().Set("Location", "/v2/"+p+"/security/users-comments/"+c.ID)
	writeJSON(w, http.StatusCreated, b)
}

var gradebookHeader = []string{"GradebookIdentifier", "AchievementIdentifier", "EventIdentifier", "FrameworkIdentifier",
	"OrganizationIdentifier", "PeriodIdentifier", "IsLocked", "GradebookTitle", "GradebookType", "LastChangeType",
	"LastChangeUser", "Reference", "GradebookCreated", "LastChangeTime"}

// export streams every gradebook (or the page Take/Page asks for) as credo's CSV, straight to
// the response: the ceiling of credo's export, which writes a file and then serves it.
func (s *server) export(w http.ResponseWriter, r *http.Request) {
	p, ok := s.partition(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if f := q.Get("Format"); f != "csv" {
		fail(w, http.StatusBadRequest, "this server exports Format=csv only")
		return
	}
	take, page := 0, 1
	if v := q.Get("Take"); v != "" {
		take, _ = strconv.Atoi(v)
	}
	if v := q.Get("Page"); v != "" {
		page, _ = strconv.Atoi(v)
	}
	if take < 0 || page < 1 {
		fail(w, http.StatusBadRequest, "bad Take or Page")
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := csv.NewWriter(bw)
	cw.UseCRLF = true
	_ = cw.Write(gradebookHeader)
	cells := make([]string, len(gradebookHeader))
	var buf []byte
	err := s.st.gradebooks(r.Context(), p, take, (page-1)*take, func(g *gradebook) error {
		for i, v := range []sql.NullString{g.ID, g.Achievement, g.Event, g.Framework, g.Org, g.Period} {
			cells[i] = v.String
		}
		cells[6] = ""
		if g.IsLocked.Valid {
			cells[6] = strconv.FormatBool(g.IsLocked.Bool)
		}
		for i, v := range []sql.NullString{g.Title, g.Type, g.ChangeType, g.ChangeUser, g.Reference} {
			cells[7+i] = v.String
		}
		for i, v := range []sql.NullString{g.Created, g.Changed} {
			cells[12+i] = ""
			if v.Valid {
				var err error
				if buf, err = appendOutput(buf[:0], v.String); err != nil {
					return err
				}
				cells[12+i] = string(buf)
			}
		}
		return cw.Write(cells)
	})
	if err != nil {
		log.Printf("export: %v", err) // the status is already sent
		return
	}
	cw.Flush()
	_ = bw.Flush()
}
