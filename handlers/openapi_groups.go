package handlers

import (
	"net/http"
	"regexp"
	"strconv"

	"credo/engine"
	"credo/handlers/request"
)

var pathVar = regexp.MustCompile(`\{([a-zA-Z0-9_]+)\}`)

// group adds a record group: its schemas, its tag and one operation per offered verb.
func (d *document) group(r *engine.Resource) {
	d.schemas[r.Name] = outputSchema(r, r.Output, "A "+r.Name+" record.")
	addWriteOnly(d.schemas[r.Name].(obj), r)
	if r.Offers(engine.OpSearch) {
		d.schemas[r.Name+"Search"] = outputSchema(r, r.SearchFields, "A reduced "+r.Name+" record, as search returns it.")
	}
	if r.Offers(engine.OpCreate) || r.Offers(engine.OpUpdate) {
		d.schemas[r.Name+"Input"] = inputSchema(r, false)
	}
	if r.Offers(engine.OpPatch) {
		d.schemas[r.Name+"Patch"] = inputSchema(r, true)
	}
	d.tag(r.Name, r.Summary+" Path `"+r.Path+"`.", tagGroupRecords)
	for _, op := range r.Ops() {
		d.add(v2Prefix+opPath(r, op), opMethod[op], groupOperation(r, op))
	}
	// The router keeps the collection paths of every group, offered or not, so that "count"
	// and "search" are never taken for a key: they answer 405 with an empty Allow.
	for _, op := range []engine.Op{engine.OpList, engine.OpCount, engine.OpSearch} {
		path := v2Prefix + opPath(r, op)
		if _, ok := d.paths[path]; !ok {
			d.paths[path] = obj{"description": "Offers no method for " + r.Name + ": every method answers 405 with an empty `Allow`."}
		}
	}
}

// opIDs name the operations of a group for generated clients, before the record name.
var opIDs = map[engine.Op]string{
	engine.OpGet: "get", engine.OpExists: "exists", engine.OpUpdate: "replace", engine.OpPatch: "patch",
	engine.OpDelete: "delete", engine.OpCreate: "create", engine.OpCount: "count", engine.OpList: "list",
	engine.OpSearch: "search",
}

func groupOperation(r *engine.Resource, op engine.Op) obj {
	params := []any{obj{"$ref": "#/components/parameters/partition"}}
	switch op {
	case engine.OpGet, engine.OpExists, engine.OpUpdate, engine.OpPatch, engine.OpDelete:
		for _, k := range r.Key {
			params = append(params, obj{"name": k.Name, "in": "path", "required": true,
				"description": "The record's " + k.Name + "; a value that is not a " + string(k.Type) + " finds no record (404).",
				"schema":      typeSchema(k.Type, false)})
		}
	}
	o := obj{"summary": opSummary(r, op), "operationId": opIDs[op] + r.Name, "tags": []string{r.Name},
		"description": "Needs the permission " + opNeed[op] + " on `" + r.Path + "`."}
	ref := func(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }
	resp := obj{}
	errs := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusInternalServerError, http.StatusServiceUnavailable}
	switch op {
	case engine.OpGet:
		params = append(params, ref2param("Includes"), ref2param("Excludes"), ref2param(ifNoneMatchParamName))
		resp["200"] = withETag(obj{"description": "The record.", "content": obj{"application/json": obj{"schema": ref(r.Name)}}})
		resp["304"] = obj{"$ref": "#/components/responses/" + notModifiedName}
		errs = append(errs, http.StatusNotAcceptable)
	case engine.OpExists:
		params = append(params, ref2param(ifNoneMatchParamName))
		resp["200"] = withETag(obj{"description": "The record exists. A GET would answer `true`; HEAD sends no body."})
		resp["304"] = obj{"$ref": "#/components/responses/" + notModifiedName}
		resp["404"] = obj{"description": "No such record, or no such partition. A GET would answer `false`; HEAD sends no body."}
		errs = append(errs, http.StatusNotAcceptable)
	case engine.OpCreate:
		o["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": ref(r.Name + "Input")}}}
		resp["201"] = obj{"description": "The stored record, with its defaults and generated key.",
			"headers": obj{"Location": obj{"required": true, "description": "The path of the new record.",
				"schema": obj{"type": "string", "format": "uri-reference"}}, etagHeaderName: etagRef()},
			"content": obj{"application/json": obj{"schema": ref(r.Name)}}}
		errs = append(errs, http.StatusNotAcceptable, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
		o["parameters"] = params
		errs = append(errs, markIdempotent(o, resp)...)
		params = o["parameters"].([]any)
	case engine.OpUpdate, engine.OpPatch:
		schema := ref(r.Name + "Input")
		content := obj{"application/json": obj{"schema": schema}}
		if op == engine.OpPatch {
			schema = ref(r.Name + "Patch")
			content = obj{request.MergePatchType: obj{"schema": schema}, "application/json": obj{"schema": schema}}
			o["description"] = "An RFC 7396 merge patch: the members sent replace the stored ones (null clears a nullable member), " +
				"the others keep their values. `application/json` is taken as a merge patch too; another patch format " +
				"(e.g. `application/json-patch+json`) is a 415 whose `Accept-Patch` names these two. " + o["description"].(string)
			resp["415"] = unsupportedPatch()
		} else {
			o["description"] = "Replaces the whole record: members left out become null, or their default or zero value. " + o["description"].(string)
		}
		o["requestBody"] = obj{"required": true, "content": content}
		params = append(params, ref2param(ifMatchParamName), ref2param(ifNoneMatchParamName))
		resp["200"] = withETag(obj{"description": "Stored; no content. `ETag` is the stored record's."})
		errs = append(errs, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusPreconditionFailed)
	case engine.OpDelete:
		params = append(params, ref2param(ifMatchParamName), ref2param(ifNoneMatchParamName))
		resp["200"] = obj{"description": "Deleted; no content."}
		errs = append(errs, http.StatusPreconditionFailed)
	case engine.OpCount:
		params = append(params, filterParams(r)...)
		resp["200"] = obj{"description": "The number of matching records.", "content": obj{"application/json": obj{"schema": ref("Count")}}}
		errs = append(errs, http.StatusNotAcceptable)
		o["description"] = "`Filter.*` paging parameters are accepted and ignored; the unprefixed ones are a 400. " + o["description"].(string)
	case engine.OpList, engine.OpSearch:
		params = append(params, filterParams(r)...)
		params = append(params, listParams(r)...)
		record := r.Name
		if op == engine.OpSearch {
			record = r.Name + "Search"
		}
		resp["200"] = obj{"description": "One page of matching records, in JSON or, with `Format=csv` or `Accept: text/csv`, in CSV.",
			"headers": obj{"X-Query-Pagination": obj{"$ref": "#/components/headers/X-Query-Pagination"}},
			"content": obj{
				"application/json": obj{"schema": obj{"type": "array", "items": ref(record)}},
				"text/csv": obj{"schema": obj{"type": "string",
					"description": "RFC 4180 CSV: a header row of member names, then one row per record."}},
			}}
		errs = append(errs, http.StatusNotAcceptable)
	}
	o["description"] = o["description"].(string) + scopeNote(r)
	addProblems(resp, errs)
	o["parameters"] = params
	o["responses"] = resp
	return o
}

func scopeNote(r *engine.Resource) string {
	if !r.Scoped() {
		return ""
	}
	return " Limited to the caller's organization unless the caller is an operator; another organization's record is a 404."
}

// listParams are the paging parameters of list and search.
func listParams(r *engine.Resource) []any {
	return []any{ref2param("Page"), takeParam(r), ref2param("Sort"), ref2param("Includes"), ref2param("Excludes"), ref2param("Format"),
		ref2param("Continue")}
}

func ref2param(name string) obj { return obj{"$ref": "#/components/parameters/" + name} }

// takeParam is the shared Take parameter, or one with the group's own maximum.
func takeParam(r *engine.Resource) obj {
	if r.MaxTake == engine.MaxTake {
		return ref2param("Take")
	}
	p := pagingParam("Take")
	p["schema"].(obj)["maximum"] = r.MaxTake
	return p
}

// filterParams are a group's filters: Identifier, one per filter, and Origin.*.
func filterParams(r *engine.Resource) []any {
	out := []any{obj{"name": "Identifier", "in": "query", "schema": typeSchema(r.Key[0].Type, false),
		"description": "Only the record whose " + r.Key[0].Name + " is this."}}
	for _, f := range r.Filters {
		desc := "Only records whose " + f.Field.Name + " equals this."
		switch f.Op {
		case engine.MatchContains:
			desc = "Only records whose " + f.Field.Name + " contains this, ignoring case."
		case engine.MatchGte:
			desc = "Only records whose " + f.Field.Name + " is at or after this instant (inclusive)."
		case engine.MatchLt:
			desc = "Only records whose " + f.Field.Name + " is before this instant (exclusive)."
		}
		s := typeSchema(f.Field.Type, false)
		if f.Field.Type == engine.TypeString {
			s["maxLength"] = f.Field.MaxLen
		}
		out = append(out, obj{"name": f.Param, "in": "query", "schema": s, "description": desc})
	}
	for _, name := range originNames {
		out = append(out, ref2param(name))
	}
	return out
}

// originNames are the Origin.* parameters (api.md rule 4).
var originNames = []string{"Origin.When", "Origin.Organization", "Origin.User", "Origin.Proxy",
	"Origin.Description", "Origin.Reason", "Origin.Source"}

// sharedParams are the parameters every group operation shares, defined once.
func sharedParams() obj {
	out := obj{"partition": obj{"name": "partition", "in": "path", "required": true,
		"description": "The partition (tenant environment) the request runs in, e.g. `e01`; an unknown one is a 404.",
		"schema":      obj{"type": "string", "pattern": "^[a-z][a-z0-9]*$"}}}
	for _, name := range []string{"Page", "Take", "Sort", "Includes", "Excludes", "Format"} {
		out[name] = pagingParam(name)
	}
	out["Continue"] = continueParam()
	out[idempotencyParamName] = idempotencyParam()
	for name, p := range conditionalParams() {
		out[name] = p
	}
	for _, name := range originNames {
		t := engine.TypeString
		switch name {
		case "Origin.When":
			t = engine.TypeDateTime
		case "Origin.Organization", "Origin.User", "Origin.Proxy":
			t = engine.TypeUUID
		}
		out[name] = obj{"name": name, "in": "query", "schema": typeSchema(t, false),
			"description": "Where the request comes from: checked for its type and logged, never a filter."}
	}
	return out
}

// pagingParam describes a paging parameter. Its Filter.* twin is an alias (api.md rule 3),
// documented here rather than as a second parameter.
func pagingParam(name string) obj {
	var s obj
	desc := ""
	switch name {
	case "Page":
		s, desc = obj{"type": "integer", "minimum": 1, "maximum": request.MaxPage, "default": 1}, "The 1-based page number."
	case "Take":
		s, desc = obj{"type": "integer", "minimum": 1, "maximum": engine.MaxTake, "default": engine.DefaultTake}, "The page size."
	case "Sort":
		s, desc = obj{"type": "string"}, "Comma list of `Member` or `Member asc|desc`; the key is appended as a tie-breaker."
	case "Includes":
		s, desc = obj{"type": "string"}, "Comma list of the members to return, in this order (also the CSV columns); others are left out. Naming no member (empty) is a 400."
	case "Excludes":
		s, desc = obj{"type": "string"}, "Comma list of members to leave out. Naming no member (empty), or leaving none, is a 400."
	case "Format":
		s, desc = obj{"type": "string", "enum": []string{"json", "csv"}, "default": "json"}, "The result format; overrides `Accept`."
	}
	desc += " `Filter." + name + "` is an alias; giving both with different values is a 400."
	return obj{"name": name, "in": "query", "schema": s, "description": desc}
}

// continueParam is the Continue parameter of list and search (issue 16).
func continueParam() obj {
	return obj{"name": "Continue", "in": "query",
		"schema": obj{"type": "string", "pattern": "^[A-Za-z0-9_-]+$", "maxLength": request.MaxContinueLength},
		"description": "The `Continuation` of the previous page's `X-Query-Pagination`: reads the page after it by " +
			"the position of its last record, so that a page deep in the result costs what the first page costs and " +
			"records inserted or deleted meanwhile neither repeat nor skip others. Send it with the parameters of the " +
			"query that gave it, unchanged (filters, `Sort`, `Take`, `Includes`, `Excludes`, `Format`), and without " +
			"`Page`. A token of another query, organization or partition, or an altered one, is a 400 naming `Continue`. " +
			"Tokens do not expire."}
}

// addWriteOnly lists a record's write-only members in its schema, marked writeOnly (decisions
// §7): a client learns they exist and that no answer carries them, also for a group whose
// records are written only by credo load and the modules.
func addWriteOnly(schema obj, r *engine.Resource) {
	props := schema["properties"].(obj)
	for _, f := range r.Fields {
		if f.WriteOnly {
			s := typeSchema(f.Type, f.Nullable)
			s["writeOnly"] = true
			s["description"] = "Write-only: accepted when the record is written, never returned."
			props[f.Name] = s
		}
	}
}

// outputSchema is a record as get, list and search answer it. No member is required:
// Includes and Excludes may leave any out; without them every member is present.
func outputSchema(r *engine.Resource, fields []*engine.Field, desc string) obj {
	props := obj{}
	for _, f := range fields {
		s := typeSchema(f.Type, f.Nullable)
		switch {
		case !f.Stored():
			s["description"] = "Computed; read-only."
		case f.ReadOnly:
			// Left out of the bodies ({Name}Input, {Name}Patch): a value sent is ignored.
			s["readOnly"] = true
			if d, ok := s["description"].(string); ok {
				s["description"] = readOnlyNote + " " + d
			} else {
				s["description"] = readOnlyNote
			}
		}
		props[f.Name] = s
	}
	return obj{"type": "object", "properties": props, "additionalProperties": false,
		"description": desc + " Every member is present unless `Includes` or `Excludes` leave it out; null where null."}
}

// readOnlyNote describes a stored read-only member (the descriptor's readOnly).
const readOnlyNote = "Read-only: set by the server on every create, PUT and PATCH; a value sent in a body is ignored."

// inputSchema is the body of create and PUT (patch false), or of PATCH: the stored members
// a client may write, without the read-only and computed ones. PATCH requires no member.
func inputSchema(r *engine.Resource, patch bool) obj {
	props := obj{}
	var req []string
	for _, f := range r.Fields {
		if f.ReadOnly {
			continue
		}
		s := typeSchema(f.Type, f.Nullable)
		if f.Type == engine.TypeString {
			s["maxLength"] = f.MaxLen
		}
		if f.WriteOnly {
			s["writeOnly"] = true // decisions §7: accepted, never returned
		}
		if f.Key {
			s["description"] = "Optional: create makes a new one when it is left out; PUT and PATCH take it from the path, and a different one is a 400."
		} else if f.WriteOnly {
			s["description"] = "Write-only: never returned. A PUT that leaves it out keeps the stored value."
		} else if d := defaultNote(f); d != "" && !patch {
			s["description"] = d
		}
		props[f.Name] = s
		if f.Required && !patch {
			req = append(req, f.Name)
		}
	}
	desc := "The members of a " + r.Name + " to store. Members left out take their default, or null, or their type's zero value; unknown members are a 400."
	if patch {
		desc = "A JSON merge patch of a " + r.Name + ": only the members sent change; null clears a nullable member."
	}
	out := obj{"type": "object", "properties": props, "additionalProperties": false, "description": desc}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

func defaultNote(f *engine.Field) string {
	switch f.Default {
	case "":
		return ""
	case "now":
		return "Left out: the current time."
	case "new":
		return "Left out: a new UUID."
	}
	return "Left out: " + strconv.Quote(f.Default) + "."
}
