package handlers

import (
	"credo/handlers/request"
)

// The names of the conditional-request parts among the document's shared components.
const (
	etagHeaderName       = "ETag"
	ifMatchParamName     = "IfMatch"
	ifNoneMatchParamName = "IfNoneMatch"
	notModifiedName      = "NotModified"
)

// etagHeader describes the ETag of a record's answers.
func etagHeader() obj {
	return obj{"required": true,
		"description": "The record's strong validator (RFC 9110 §8.8.3), quoted: it changes whenever any member of the " +
			"record does, and is the full record's whatever `Includes` or `Excludes` leave out. Send it back in `If-Match` " +
			"to write only the version read, or in `If-None-Match` to get a 304 while the record is unchanged.",
		"schema": obj{"type": "string", "pattern": `^"[!#-~]+"$`, "examples": []string{`"q1Ob8bYdX5yVfGZ8o2oJ1m5fB4nYtXoQd0zq7l2c9hE"`}}}
}

// conditionalParams describes If-Match and If-None-Match.
func conditionalParams() obj {
	tags := obj{"type": "string", "minLength": 1}
	return obj{
		ifMatchParamName: obj{"name": request.IfMatchHeader, "in": "header", "required": false, "schema": tags,
			"description": "Writes only if the record's current ETag is one of these entity tags (strong comparison, so a " +
				"weak `W/` tag never matches), or, with `*`, if the record exists. A record changed since is a 412 and is " +
				"left as it is; a missing record is a 404 whatever the header says. Without the header the write is " +
				"unconditional. A value that is not `*` or a comma list of quoted entity tags is a 400."},
		ifNoneMatchParamName: obj{"name": request.IfNoneMatchHeader, "in": "header", "required": false, "schema": tags,
			"description": "On get and HEAD, answers 304 with no body when the record's ETag is one of these entity tags " +
				"(weak comparison: `W/` is ignored) or, with `*`, when the record exists; on PUT, PATCH and DELETE, refuses " +
				"the write with a 412 then, and leaves the record as it is. A missing record is a 404. A value that is not " +
				"`*` or a comma list of quoted entity tags is a 400."},
	}
}

// notModified describes the 304 of a get or exists whose If-None-Match names the record's ETag;
// both read Accept (varyOnAccept).
func notModified() obj {
	return obj{"description": "The record is unchanged since the ETag that `If-None-Match` names: no body.",
		"headers": obj{etagHeaderName: etagRef(), "Vary": varyHeader}}
}

func etagRef() obj { return obj{"$ref": "#/components/headers/" + etagHeaderName} }

// withETag adds the ETag header to a success answer.
func withETag(resp obj) obj {
	hs, _ := resp["headers"].(obj)
	if hs == nil {
		hs = obj{}
		resp["headers"] = hs
	}
	hs[etagHeaderName] = etagRef()
	return resp
}
