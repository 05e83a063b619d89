package handlers

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"credo/engine"
	"credo/handlers/route"
)

// Version is the build's version, set at link time (-ldflags "-X credo/handlers.Version=v1.2.3").
var Version = "v0.1.0-dev"

// obj is a JSON object under construction.
type obj = map[string]any

// OpenAPI returns the OpenAPI 3.1 document of every v2 route, built from the descriptors and
// the modules' route descriptions.
func (s *Server) OpenAPI() obj {
	schemas := obj{"Problem": problemSchema()}
	for _, r := range s.Registry.Public() {
		schemas[r.Name] = recordSchema(r.Output)
		schemas[r.Name+"Input"] = inputSchema(r)
		schemas[r.Name+"Search"] = recordSchema(r.SearchFields)
	}
	paths := obj{}
	for _, e := range s.Endpoints() {
		p := "/v2/{partition}/" + e.Path
		item, _ := paths[p].(obj)
		if item == nil {
			item = obj{}
			paths[p] = item
		}
		item[strings.ToLower(e.Method)] = operation(e)
	}
	paths["/v2/{partition}/openapi.json"] = obj{"get": obj{
		"summary": "This OpenAPI document.", "operationId": "openapi",
		"parameters": []obj{partitionParam()}, "security": []obj{},
		"responses": obj{"200": obj{"description": "The OpenAPI 3.1 document.", "content": obj{"application/json": obj{"schema": obj{"type": "object"}}}}},
	}}
	return obj{
		"openapi": "3.1.0",
		"info": obj{"title": "credo", "version": Version,
			"description": "Learning, assessment and credentialing platform API, version 2. Generated from the record-group descriptors."},
		"paths": paths,
		"components": obj{
			"schemas":         schemas,
			"securitySchemes": obj{"bearer": obj{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
		},
		"security": []obj{{"bearer": []string{}}},
	}
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	b, err := json.Marshal(s.OpenAPI())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, err = w.Write(b)
	return err
}

var pathVar = regexp.MustCompile(`\{([a-zA-Z0-9]+)\}`)

func operation(e Endpoint) obj {
	params := []obj{partitionParam()}
	for _, m := range pathVar.FindAllStringSubmatch(e.Path, -1) {
		p := obj{"name": m[1], "in": "path", "required": true, "schema": obj{"type": "string"}}
		if e.Resource != nil && strings.HasPrefix(m[1], "key") {
			k := e.Resource.Key[m[1][3]-'0']
			p["schema"] = typeSchema(k.Type, false)
			p["description"] = k.Name
		}
		params = append(params, p)
	}
	op := obj{"summary": e.Summary, "parameters": params, "responses": obj{}}
	id := strings.NewReplacer("/", "_", "-", "_", "{", "", "}", "").Replace(e.Path)
	op["operationId"] = strings.ToLower(e.Method) + "_" + id
	resp := op["responses"].(obj)
	problemRef := obj{"application/problem+json": obj{"schema": obj{"$ref": "#/components/schemas/Problem"}}}
	resp["400"] = obj{"description": "Bad request: the problem names the parameter or member.", "content": problemRef}
	if e.Access == route.Public {
		op["security"] = []obj{}
	} else {
		resp["401"] = obj{"description": "No valid credential.", "content": problemRef}
		if e.Access == route.Protected {
			resp["403"] = obj{"description": "Not permitted: needs " + e.Need + " on " + e.Object + ".", "content": problemRef}
		}
	}
	if e.Resource == nil {
		resp["200"] = obj{"description": "Success."}
		return op
	}
	r := e.Resource
	ref := func(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }
	jsonOf := func(schema obj) obj { return obj{"application/json": obj{"schema": schema}} }
	notFound := obj{"description": "No such record.", "content": problemRef}
	switch e.Op {
	case engine.OpGet:
		params = append(params, listParam("Includes"), listParam("Excludes"))
		resp["200"] = obj{"description": "The record.", "content": jsonOf(ref(r.Name))}
		resp["404"] = notFound
	case engine.OpExists:
		resp["200"] = obj{"description": "The record exists (body `true`, not sent with HEAD)."}
		resp["404"] = obj{"description": "No such record (body `false`, not sent with HEAD)."}
	case engine.OpCreate:
		op["requestBody"] = obj{"required": true, "content": jsonOf(ref(r.Name + "Input"))}
		resp["201"] = obj{"description": "The created record; Location names it.", "content": jsonOf(ref(r.Name))}
	case engine.OpUpdate, engine.OpPatch:
		ct := "application/json"
		if e.Op == engine.OpPatch {
			ct = "application/merge-patch+json"
		}
		op["requestBody"] = obj{"required": true, "content": obj{ct: obj{"schema": ref(r.Name + "Input")}}}
		resp["200"] = obj{"description": "Updated; no content."}
		resp["404"] = notFound
	case engine.OpDelete:
		resp["200"] = obj{"description": "Deleted; no content."}
		resp["404"] = notFound
	case engine.OpCount:
		params = append(params, filterParams(r, false)...)
		resp["200"] = obj{"description": "The number of matches.", "content": jsonOf(obj{"type": "object",
			"properties": obj{"Count": obj{"type": "integer"}}, "required": []string{"Count"}})}
	case engine.OpList, engine.OpSearch:
		params = append(params, filterParams(r, true)...)
		item := r.Name
		if e.Op == engine.OpSearch {
			item = r.Name + "Search"
		}
		resp["200"] = obj{"description": "One page of records; X-Query-Pagination has Page, PageSize and TotalCount.",
			"headers": obj{"X-Query-Pagination": obj{"schema": obj{"type": "string"}}},
			"content": obj{"application/json": obj{"schema": obj{"type": "array", "items": ref(item)}},
				"text/csv": obj{"schema": obj{"type": "string"}}}}
	}
	op["parameters"] = params
	return op
}

func partitionParam() obj {
	return obj{"name": "partition", "in": "path", "required": true, "schema": obj{"type": "string", "pattern": "^[a-z][a-z0-9]*$"}}
}

func listParam(name string) obj {
	return obj{"name": name, "in": "query", "schema": obj{"type": "string"}, "description": "Comma-separated member names."}
}

func filterParams(r *engine.Resource, paging bool) []obj {
	var out []obj
	q := func(name string, schema obj, desc string) {
		p := obj{"name": name, "in": "query", "schema": schema}
		if desc != "" {
			p["description"] = desc
		}
		out = append(out, p)
	}
	q("Identifier", typeSchema(r.Key[0].Type, false), "Filters by "+r.Key[0].Name+".")
	for _, f := range r.Filters {
		desc := ""
		switch f.Op {
		case engine.MatchContains:
			desc = "Case-insensitive substring of " + f.Field.Name + "."
		case engine.MatchGte:
			desc = f.Field.Name + " at or after (inclusive)."
		case engine.MatchLt:
			desc = f.Field.Name + " before (exclusive)."
		}
		q(f.Param, typeSchema(f.Field.Type, false), desc)
	}
	origins := []string{"Origin.When", "Origin.Organization", "Origin.User", "Origin.Proxy", "Origin.Description", "Origin.Reason", "Origin.Source"}
	for _, o := range origins {
		t := engine.TypeString
		switch o {
		case "Origin.When":
			t = engine.TypeDateTime
		case "Origin.Organization", "Origin.User", "Origin.Proxy":
			t = engine.TypeUUID
		}
		q(o, typeSchema(t, false), "Checked and logged; not a filter.")
	}
	for _, prefix := range []string{"Filter.", ""} {
		if prefix == "" && !paging {
			break
		}
		q(prefix+"Page", obj{"type": "integer", "minimum": 1, "default": 1}, "")
		q(prefix+"Take", obj{"type": "integer", "minimum": 1, "maximum": r.MaxTake, "default": engine.DefaultTake}, "")
		q(prefix+"Sort", obj{"type": "string"}, "Comma list of `Field` or `Field asc|desc`.")
		q(prefix+"Includes", obj{"type": "string"}, "Comma list of members to return, in order.")
		q(prefix+"Excludes", obj{"type": "string"}, "Comma list of members to leave out.")
		q(prefix+"Format", obj{"type": "string", "enum": []string{"json", "csv"}}, "")
	}
	return out
}

func typeSchema(t engine.Type, nullable bool) obj {
	var s obj
	switch t {
	case engine.TypeUUID:
		s = obj{"type": "string", "format": "uuid"}
	case engine.TypeBool:
		s = obj{"type": "boolean"}
	case engine.TypeInt:
		s = obj{"type": "integer", "format": "int32"}
	case engine.TypeDateTime:
		s = obj{"type": "string", "format": "date-time", "description": "ISO 8601 with an offset; up to 7 fraction digits."}
	default:
		s = obj{"type": "string"}
	}
	if nullable {
		s["type"] = []any{s["type"], "null"}
	}
	return s
}

func recordSchema(fields []*engine.Field) obj {
	props := obj{}
	var req []string
	for _, f := range fields {
		props[f.Name] = typeSchema(f.Type, f.Nullable)
		req = append(req, f.Name)
	}
	return obj{"type": "object", "properties": props, "required": req}
}

func inputSchema(r *engine.Resource) obj {
	props := obj{}
	var req []string
	for _, f := range r.Fields {
		s := typeSchema(f.Type, f.Nullable)
		if f.ReadOnly {
			s["readOnly"] = true
		}
		if f.Type == engine.TypeString {
			s["maxLength"] = f.MaxLen
		}
		props[f.Name] = s
		if f.Required {
			req = append(req, f.Name)
		}
	}
	sort.Strings(req)
	out := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

func problemSchema() obj {
	return obj{"type": "object", "properties": obj{
		"Type": obj{"type": "string"}, "Title": obj{"type": "string"}, "Status": obj{"type": "integer"},
		"Detail": obj{"type": "string"}, "Instance": obj{"type": "string"},
		"Errors": obj{"type": "object", "additionalProperties": obj{"type": "array", "items": obj{"type": "string"}}},
	}}
}
