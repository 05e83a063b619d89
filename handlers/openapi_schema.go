package handlers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"credo/engine"
	"credo/handlers/route"
)

// DateTimePattern is the send format of api.md as a regular expression: the engine refuses a
// datetime without an offset or with more than 7 fraction digits, which "date-time" alone allows.
const DateTimePattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,7})?(Z|[+-][0-9]{2}:[0-9]{2})$`

// dateTimeSchema is the schema of every datetime on the wire.
func dateTimeSchema() obj {
	return obj{"type": "string", "format": "date-time", "pattern": DateTimePattern,
		"description": "ISO 8601 with an offset (`Z` or `±HH:mm`) and up to 7 fraction digits; kept with its offset."}
}

// typeSchema is the schema of a member of a field type.
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
		s = dateTimeSchema()
	default:
		s = obj{"type": "string"}
	}
	if nullable {
		orNull(s)
	}
	return s
}

// orNull lets a schema with a type also be null (OpenAPI 3.1: a type array).
func orNull(s obj) obj {
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case nil:
		if ref, ok := s["$ref"]; ok {
			delete(s, "$ref")
			s["oneOf"] = []any{obj{"$ref": ref}, obj{"type": "null"}}
		}
	}
	return s
}

// schemaJSON returns the document form of a route schema; decoded says that a request is
// decoded into Go types (see goSchema).
func schemaJSON(s route.Schema, decoded bool) obj {
	var out obj
	switch {
	case s.Go != nil:
		out = goSchema(reflect.TypeOf(s.Go), s.Members, decoded)
	case s.Ref != "":
		out = obj{"$ref": "#/components/schemas/" + s.Ref}
	case len(s.OneOf) > 0:
		var alts []any
		for _, a := range s.OneOf {
			alts = append(alts, schemaJSON(a, decoded))
		}
		out = obj{"oneOf": alts}
	default:
		out = obj{}
		if s.Type != "" {
			out["type"] = s.Type
		}
		if s.Items != nil {
			out["items"] = schemaJSON(*s.Items, decoded)
		}
		if s.Type == "object" && len(s.Properties) > 0 {
			props := obj{}
			var req []string
			for _, p := range s.Properties {
				props[p.Name] = schemaJSON(p.Schema, decoded)
				if p.Required {
					req = append(req, p.Name)
				}
			}
			out["properties"] = props
			out["additionalProperties"] = false
			if len(req) > 0 {
				out["required"] = req
			}
		}
	}
	if s.Format == "date-time" {
		for k, v := range dateTimeSchema() {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}
	set := func(k string, v any, ok bool) {
		if ok {
			out[k] = v
		}
	}
	set("format", s.Format, s.Format != "")
	set("pattern", s.Pattern, s.Pattern != "")
	set("enum", s.Enum, len(s.Enum) > 0)
	for k, p := range map[string]*int64{"minimum": s.Minimum, "maximum": s.Maximum, "maxItems": s.MaxItems, "maxLength": s.MaxLength} {
		if p != nil {
			out[k] = *p
		}
	}
	set("description", s.Description, s.Description != "")
	set("default", s.Default, s.Default != nil)
	set("examples", []any{s.Example}, s.Example != nil)
	if s.Nullable {
		orNull(out)
	}
	return out
}

var (
	dateTimeType  = reflect.TypeFor[engine.DateTime]()
	timeType      = reflect.TypeFor[time.Time]()
	rawJSONType   = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// goSchema reflects the encoding/json form of a Go type: structs are objects of their exported
// members (embedded structs inlined), pointers are nullable, slices are arrays and maps objects.
// Members without omitempty are required in what the server encodes; in what it decodes
// (decoded) no member is, as a JSON decoder leaves an absent member at its zero value.
// members overrides member schemas by JSON name; an override with only a description, enum,
// format or bounds refines the reflected schema.
func goSchema(t reflect.Type, members map[string]route.Schema, decoded bool) obj {
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	var out obj
	switch {
	case t == dateTimeType:
		out = dateTimeSchema()
	case t == timeType:
		// encoding/json writes nanoseconds and Z, not the API's datetime form (decisions §3).
		panic(fmt.Sprintf("handlers: openapi: %s: answer instants as engine.DateTime, not time.Time", t))
	case t == rawJSONType || t.Kind() == reflect.Interface:
		out = obj{}
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		panic(fmt.Sprintf("handlers: openapi: %s has its own JSON form; describe it with a route.Schema", t))
	default:
		switch t.Kind() {
		case reflect.String:
			out = obj{"type": "string"}
		case reflect.Bool:
			out = obj{"type": "boolean"}
		case reflect.Int32:
			out = obj{"type": "integer", "format": "int32"}
		case reflect.Int, reflect.Int64, reflect.Int8, reflect.Int16, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out = obj{"type": "integer"}
		case reflect.Float32, reflect.Float64:
			out = obj{"type": "number"}
		case reflect.Slice, reflect.Array:
			out = obj{"type": "array", "items": goSchema(t.Elem(), nil, decoded)}
		case reflect.Map:
			out = obj{"type": "object", "additionalProperties": goSchema(t.Elem(), nil, decoded)}
		case reflect.Struct:
			out = structSchema(t, members, decoded)
		default:
			panic(fmt.Sprintf("handlers: openapi: cannot describe %s", t))
		}
	}
	if nullable {
		orNull(out)
	}
	return out
}

func structSchema(t reflect.Type, members map[string]route.Schema, decoded bool) obj {
	props := obj{}
	var req []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s := goSchema(f.Type, nil, decoded)
			if o, ok := members[name]; ok {
				if o.Go == nil && o.Ref == "" && len(o.OneOf) == 0 && o.Type == "" {
					nullable := o.Nullable
					o.Nullable = false
					for k, v := range schemaJSON(o, decoded) {
						s[k] = v
					}
					if nullable {
						orNull(s)
					}
				} else {
					s = schemaJSON(o, decoded)
				}
			}
			props[name] = s
			if !decoded && !strings.Contains(opts, "omitempty") {
				req = append(req, name)
			}
		}
	}
	walk(t)
	for name := range members {
		if _, ok := props[name]; !ok {
			panic(fmt.Sprintf("handlers: openapi: %s has no member %s to describe", t, name))
		}
	}
	out := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}
