package people

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"credo/engine"
)

// Row is one PersonImportRow, its strings trimmed ("" for null or absent).
type Row struct {
	Identifier, Email, FirstName, LastName, BusinessTitle, EmployeeType, Location, Manager string
	// failed holds the members that did not decode (rowMember when the row is not an object):
	// their problem is reported, and the checks do not also find them missing.
	failed map[string]bool
}

// bad reports whether member did not decode, or the whole row did not.
func (r *Row) bad(member string) bool { return r.failed[member] || r.failed[rowMember] }

func (r *Row) fail(member string) {
	if r.failed == nil {
		r.failed = map[string]bool{}
	}
	r.failed[member] = true
}

// member returns the field of r that a JSON member fills, or nil for an unknown member.
func (r *Row) member(name string) *string {
	switch name {
	case "Identifier":
		return &r.Identifier
	case "Email":
		return &r.Email
	case "FirstName":
		return &r.FirstName
	case "LastName":
		return &r.LastName
	case "BusinessTitle":
		return &r.BusinessTitle
	case "EmployeeType":
		return &r.EmployeeType
	case "Location":
		return &r.Location
	case "Manager":
		return &r.Manager
	}
	return nil
}

// rowMember is the member name for problems of a whole row.
const rowMember = "Row"

// problems collects "<message> (<row>)" per member into one validation error: the first
// engine.MaxRowProblems by row, every one counted (engine.RowProblems), so that a 32 MiB body
// of bad rows is answered by a bounded problem document.
type problems struct {
	rows engine.RowProblems
}

func (p *problems) add(member string, row int, format string, args ...any) {
	p.rows.Add(engine.RowError{Row: row, Member: member, Msg: fmt.Sprintf(format, args...)})
}

// err returns the problems as one 400, each member's messages in row order, or nil when there
// are none. Its detail counts every problem and row, and the problems not listed.
func (p *problems) err() error {
	if p.rows.Len() == 0 {
		return nil
	}
	verr := &engine.ValidationError{}
	for _, pr := range p.rows.List() {
		verr.Add(pr.Member, fmt.Sprintf("%s (%d)", pr.Msg, pr.Row))
	}
	verr.Detail = fmt.Sprintf("%d problem(s) in %d row(s); nothing was imported", p.rows.Len(), p.rows.Rows())
	if more := p.rows.Unlisted(); more != "" {
		verr.Detail += fmt.Sprintf("; the first %d are listed, %s", engine.MaxRowProblems, more)
	}
	return verr
}

// decodeRows reads the import body: a JSON array of PersonImportRow objects whose members are
// strings or null, each row read by engine.DecodeObjectApart (a repeated member, invalid UTF-8
// or U+0000 is a problem of its row). Unknown members and other JSON types are problems of
// their row too; they are returned with the rows, for the import to report together with
// the problems of the members that did decode (Row.failed marks those that did not). err is
// a body that is not an array.
func decodeRows(body []byte) ([]Row, problems, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil || raws == nil {
		return nil, problems{}, notRows(body)
	}
	rows := make([]Row, len(raws))
	var ps problems
	for i, raw := range raws {
		members, textProblems, err := engine.DecodeObjectApart(raw)
		if err != nil {
			if raw[0] == '{' {
				// An object encoding/json read: the one rule it breaks is the depth.
				ps.add(rowMember, i, "the row nests objects and arrays more than %d deep", engine.MaxJSONDepth)
			} else {
				ps.add(rowMember, i, "the row must be a PersonImportRow object")
			}
			rows[i].fail(rowMember)
			continue
		}
		for _, m := range textProblems.Members() {
			for _, msg := range textProblems.Fields[m] {
				ps.add(m, i, "%s", msg)
			}
			rows[i].fail(engine.MemberOf(m))
		}
		names := make([]string, 0, len(members))
		for name := range members {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			dst := rows[i].member(name)
			switch {
			case rows[i].failed[engine.ShownName(name)]:
				continue // its text is the problem reported
			case dst == nil:
				ps.add(engine.ShownName(name), i, "%s is not a member of PersonImportRow", engine.ShownName(name))
				continue
			}
			v := bytes.TrimSpace(members[name])
			if string(v) == "null" {
				continue
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				ps.add(name, i, "%s must be a string or null", name)
				rows[i].fail(name)
				continue
			}
			*dst = strings.TrimSpace(s)
		}
	}
	return rows, ps, nil
}

// notRows is the problem of a body that is not a JSON array: its syntax problem in the words
// a create's body gets (engine.JSONKind), or the kind of value it is instead. encoding/json's
// own messages name Go types ("cannot unmarshal object into Go value of type
// []json.RawMessage").
func notRows(body []byte) error {
	kind, err := engine.JSONKind(body)
	if err != nil {
		return err
	}
	return engine.Invalid("the body must be a JSON array of PersonImportRow objects, not %s", kind)
}
