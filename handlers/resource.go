package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"credo/engine"
	"credo/handlers/deadline"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// MaxBodyBytes caps create, update and patch bodies (decisions §3); larger is a 413.
const MaxBodyBytes = request.MaxBodyBytes

// resourceHandler serves the standard operations of one record group: decode, one engine
// call, write.
type resourceHandler struct {
	res *engine.Resource
	// check is the group's write check (hooks: authorize:), nil when it names none.
	check engine.WriteCheck
	// keys signs list and search continuation tokens.
	keys ContinuationKeys
}

// writing returns the request's context with the group's write check attached.
func (h *resourceHandler) writing(r *http.Request) context.Context {
	if h.check == nil {
		return r.Context()
	}
	return engine.WithWriteCheck(r.Context(), h.res, h.check)
}

func (h *resourceHandler) handler(op engine.Op) problem.HandlerFunc {
	switch op {
	case engine.OpGet:
		return h.get
	case engine.OpExists:
		return h.exists
	case engine.OpCreate:
		return h.create
	case engine.OpUpdate:
		return h.update
	case engine.OpPatch:
		return h.patch
	case engine.OpDelete:
		return h.delete
	case engine.OpCount:
		return h.count
	case engine.OpList:
		return h.list(request.KindList)
	case engine.OpSearch:
		return h.list(request.KindSearch)
	}
	panic(fmt.Sprintf("handlers: no handler for operation %q", op))
}

// scope returns the organizations the caller sees of this resource: every one when the
// resource is not scoped.
func (h *resourceHandler) scope(r *http.Request) engine.Scope {
	if !h.res.Scoped() {
		return engine.AllOrganizations()
	}
	return request.Scope(r.Context())
}

// key reads the item's key from the path: text that is not valid UTF-8 or holds U+0000 is a
// 400 naming the key member; text that is not of the key's type is no such record (404).
func (h *resourceHandler) key(r *http.Request) ([]any, error) {
	vars := mux.Vars(r)
	segs := make([]string, len(h.res.Key))
	for i, k := range h.res.Key {
		segs[i] = vars[k.Name]
		if err := request.CheckPath(k.Name, segs[i]); err != nil {
			return nil, err
		}
	}
	return h.res.ParseKey(segs)
}

// get answers the record with its ETag, or 304 with the ETag alone when If-None-Match names it.
// The ETag is always the full record's (engine.Resource.ETag), whatever Includes or Excludes
// leave out of the body, so that the one a projected get returns serves a later If-Match.
func (h *resourceHandler) get(w http.ResponseWriter, r *http.Request) error {
	if _, err := negotiate(w, r, false); err != nil {
		return err
	}
	key, err := h.key(r)
	if err != nil {
		return err
	}
	fields, projected := h.res.Output, false
	if r.URL.RawQuery != "" {
		values, err := request.Query(r)
		if err != nil {
			return err
		}
		if fields, err = request.Fields(h.res, values); err != nil {
			return err
		}
		projected = true
	}
	if err := request.CheckNoneMatch(r); err != nil {
		return err
	}
	rec, err := engine.StoreFrom(r.Context()).Get(r.Context(), h.res, key, h.res.Output, h.scope(r))
	if err != nil {
		return err
	}
	// The full record's encoding is the ETag's input and, unprojected, the body too.
	buf := bodyBuffer()
	b := engine.AppendJSON(*buf, rec, h.res.Output)
	defer func() { releaseBody(buf, b) }()
	if done, err := checkNotModified(w, r, engine.ETagOfJSON(b)); done || err != nil {
		return err
	}
	if projected {
		b = engine.AppendJSON(b[:0], rec, fields)
	}
	return problem.Body(w, http.StatusOK, b)
}

// checkNotModified sets the ETag of a record and, when the request's If-None-Match names it (or
// is "*"), answers 304 with no body and reports true (RFC 9110 §13.1.2).
func checkNotModified(w http.ResponseWriter, r *http.Request, tag string) (bool, error) {
	w.Header()["Etag"] = []string{tag}
	match, err := request.NoneMatch(r, tag)
	if err != nil || !match {
		return false, err
	}
	w.WriteHeader(http.StatusNotModified)
	return true, nil
}

// exists answers HEAD with 200 or 404, the JSON type and the length of `true` or `false`; a
// record found carries its ETag, and a 304 when If-None-Match names it, as get does. It reads
// the record (not only its key) to compute the ETag.
//
// Its Accept is read as get's: an answer get would refuse with a 406 is a 406 here too, since a
// HEAD answers what a GET would, without the body (RFC 9110 §9.3.2).
func (h *resourceHandler) exists(w http.ResponseWriter, r *http.Request) error {
	if _, err := negotiate(w, r, false); err != nil {
		return err
	}
	var rec engine.Record
	key, err := h.key(r)
	if err == nil {
		if err = request.CheckNoneMatch(r); err != nil {
			return err
		}
		rec, err = engine.StoreFrom(r.Context()).Get(r.Context(), h.res, key, h.res.Output, h.scope(r))
	}
	if err != nil && !engine.IsNotFound(err) {
		return err
	}
	body, status := "false", http.StatusNotFound
	if rec != nil {
		if done, err := checkNotModified(w, r, h.res.ETag(rec)); done || err != nil {
			return err
		}
		body, status = "true", http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	return nil
}

// create answers the stored record in JSON; the router checks its Accept before the
// Idempotency-Key keeper (acceptsJSON).
func (h *resourceHandler) create(w http.ResponseWriter, r *http.Request) error {
	body, err := request.Body(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	d, err := h.res.DecodeDraft(body)
	if err != nil {
		return err
	}
	rec, err := engine.StoreFrom(r.Context()).Create(h.writing(r), h.res, d, h.scope(r))
	if err != nil {
		return err
	}
	return h.created(w, r, rec)
}

// created answers the record rec as its create does: 201, Location, ETag and the record.
func (h *resourceHandler) created(w http.ResponseWriter, r *http.Request, rec engine.Record) error {
	loc := "/v2/" + mux.Vars(r)["partition"] + "/" + h.res.Path
	for i := range h.res.Key {
		loc += "/" + url.PathEscape(h.res.KeySegment(rec, i))
	}
	// The body is the full record's encoding, so it gives the ETag too (encoded once).
	buf := bodyBuffer()
	out := engine.AppendJSON(*buf, rec, h.res.Output)
	defer func() { releaseBody(buf, out) }()
	w.Header()["Location"] = []string{loc}
	w.Header()["Etag"] = []string{engine.ETagOfJSON(out)}
	return problem.Body(w, http.StatusCreated, out)
}

// found answers the record with key, as it is now, as its create did (idempotency.Found): the
// answer to the retry of a create whose work was done and whose answer was lost.
func (h *resourceHandler) found(w http.ResponseWriter, r *http.Request, key []any) error {
	rec, err := engine.StoreFrom(r.Context()).Get(r.Context(), h.res, key, h.res.Output, h.scope(r))
	if err != nil {
		return err
	}
	return h.created(w, r, rec)
}

func (h *resourceHandler) update(w http.ResponseWriter, r *http.Request) error {
	return h.write(w, r, (*engine.Store).Update)
}

// patch applies a JSON merge patch (RFC 7396). A body of another patch format, such as a JSON
// Patch (application/json-patch+json), is a 415 with Accept-Patch naming the formats taken
// (RFC 5789 §2.2), not a merge patch that fails to decode.
func (h *resourceHandler) patch(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !request.IsMergePatch(ct) {
		p := problem.New(http.StatusUnsupportedMediaType,
			"Content-Type %s is not a JSON merge patch; send %s (RFC 7396) or application/json.", engine.Quoted(ct), request.MergePatchType)
		p.Header = http.Header{"Accept-Patch": {request.AcceptPatch}}
		return p
	}
	return h.write(w, r, (*engine.Store).Patch)
}

// write reads the key and body of a PUT or PATCH and answers 200 with no content and the
// written record's ETag, which the engine reads in the write's transaction.
func (h *resourceHandler) write(w http.ResponseWriter, r *http.Request,
	verb func(*engine.Store, context.Context, *engine.Resource, []any, engine.Draft, engine.Scope) error) error {
	key, err := h.key(r)
	if err != nil {
		return err
	}
	cond, err := h.condition(r)
	if err != nil {
		return err
	}
	body, err := request.Body(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	st, ctx := engine.StoreFrom(r.Context()), engine.WithCondition(h.writing(r), h.res, cond)
	// A body that is not a JSON object is a 400 at once; the problems of its members are the
	// verb's to report, after a 404 or 412, with every other problem of the members.
	d, err := h.res.DecodeDraft(body)
	if err != nil {
		return err
	}
	if err := verb(st, ctx, h.res, key, d, h.scope(r)); err != nil {
		return err
	}
	w.Header().Set("ETag", cond.ETag)
	w.WriteHeader(http.StatusOK)
	return nil
}

// condition is the write's If-Match and If-None-Match (neither: unconditional) for the engine,
// which checks them on the locked row: a stale If-Match, or an If-None-Match naming the
// record's ETag (or "*"), is engine.ErrPrecondition, a 412 (handlers/problem).
func (h *resourceHandler) condition(r *http.Request) (*engine.Condition, error) {
	tags, err := request.IfMatch(r)
	if err != nil {
		return nil, err
	}
	none, err := request.IfNoneMatch(r)
	if err != nil {
		return nil, err
	}
	return &engine.Condition{IfMatch: tags, IfNoneMatch: none}, nil
}

func (h *resourceHandler) delete(w http.ResponseWriter, r *http.Request) error {
	key, err := h.key(r)
	if err != nil {
		return err
	}
	cond, err := h.condition(r)
	if err != nil {
		return err
	}
	ctx := engine.WithCondition(h.writing(r), h.res, cond)
	if err := engine.StoreFrom(r.Context()).Delete(ctx, h.res, key, h.scope(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *resourceHandler) count(w http.ResponseWriter, r *http.Request) error {
	if _, err := negotiate(w, r, false); err != nil {
		return err
	}
	values, err := request.Query(r)
	if err != nil {
		return err
	}
	q, err := request.ListQuery(h.res, values, request.KindCount)
	if err != nil {
		return err
	}
	logOrigin(r, q.Origin)
	n, err := engine.StoreFrom(r.Context()).Count(r.Context(), h.res, q, h.scope(r))
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, struct{ Count int64 }{n})
}

func (h *resourceHandler) list(kind request.Kind) problem.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		accept, err := negotiate(w, r, true)
		if err != nil {
			return err
		}
		values, err := request.Query(r)
		if err != nil {
			return err
		}
		tok, err := request.TakeContinue(values)
		if err != nil {
			return err
		}
		q, err := request.ListQuery(h.res, values, kind)
		if err != nil {
			return err
		}
		logOrigin(r, q.Origin)
		if !request.HasFormat(values) {
			q.Format = accept
		}
		partition := mux.Vars(r)["partition"]
		cont := request.Continuation{Key: h.keys.ContinuationKey(partition), Partition: partition,
			Resource: h.res, Kind: kind, Scope: h.scope(r)}
		if tok != "" {
			if q.Page, q.After, err = cont.Read(q, tok); err != nil {
				return err
			}
		}
		page, err := engine.StoreFrom(r.Context()).ListPage(r.Context(), h.res, q, h.scope(r))
		if err != nil {
			return err
		}
		pg := pagination{Page: q.Page, PageSize: q.Take, TotalCount: page.Total}
		if page.Next != nil {
			if pg.Continuation, err = cont.Token(q, q.Page+1, page.Next); err != nil {
				return err
			}
		}
		b, err := json.Marshal(pg)
		if err != nil {
			return err
		}
		w.Header().Set("X-Query-Pagination", string(b))
		recs := page.Records
		if q.Format == engine.FormatCSV {
			return writeCSV(w, r, recs, q.Fields)
		}
		return writeRecords(w, r, recs, q.Fields)
	}
}

// pagination is the X-Query-Pagination header of list and search answers. Continuation, when
// another page follows, is the token that Continue takes to read it (issue 16).
type pagination struct {
	Page, PageSize int
	TotalCount     int64
	Continuation   string `json:",omitempty"`
}

// writeRecords writes a page of records as a JSON array. A page larger than deadline.Chunk
// goes out through deadline.Writer, so that a large page to a slow reader finishes as long as
// it keeps reading.
func writeRecords(w http.ResponseWriter, r *http.Request, recs []engine.Record, fields []*engine.Field) error {
	buf := bodyBuffer()
	b := append(*buf, '[')
	defer func() { releaseBody(buf, b) }()
	for i, rec := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = engine.AppendJSON(b, rec, fields)
	}
	b = append(b, ']', '\n')
	problem.JSONHeader(w.Header(), len(b))
	w.WriteHeader(http.StatusOK)
	var out io.Writer = w
	if len(b) > deadline.Chunk {
		out = deadline.Writer(w, r, w)
	}
	_, err := out.Write(b)
	return err
}

// writeCSV answers records as CSV with the one engine.CSVWriter (values byte for byte),
// through deadline.Writer.
func writeCSV(w http.ResponseWriter, r *http.Request, recs []engine.Record, fields []*engine.Field) error {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	cw := engine.NewCSVWriter(deadline.Writer(w, r, w), fields)
	if err := cw.WriteHeader(); err != nil {
		return err
	}
	for _, rec := range recs {
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	return cw.Flush()
}
