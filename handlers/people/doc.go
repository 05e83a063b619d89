// Package people serves the people import (decisions §11): a JSON array of PersonImportRow
// becomes people of the caller's organization, with their users and manager connections,
// all or nothing.
//
// Choices where the specification is silent:
//   - Rows are numbered from 0, in body order; every problem reads "<message> (<row>)" under
//     the member it concerns ("Row" for a row that is not an object). Strings are trimmed;
//     an empty string is the same as null or an absent member.
//   - One 400 names every problem of the file: a member that does not decode (not a string
//     or null, a text problem, a name given twice or no member's) and a row that is not an
//     object are reported with the problems the checks find in the members that did decode
//     (required, identifiers, Emails, managers); a member that did not decode is not also
//     reported missing.
//   - A row's Email is matched against the partition's users as the users' unique constraint
//     compares Emails, ignoring ASCII case (docs/design.md, "Emails ignore case"): a match
//     gets the new person and keeps its Email as stored, otherwise a user is created with the
//     row's Email as sent, FirstName, LastName and FullName. An Email already having a person
//     in the caller's organization, or repeated in the file in any case, is a problem.
//   - Manager is the Email, in any case, of a user that has a person in the caller's
//     organization, or of any row of the same file (before or after the row); it may not be
//     the row's own Email. It
//     is recorded as the connection From the manager To the person's user with IsManager
//     true; an existing connection between them gets IsManager true.
//   - The person's FullName is "FirstName LastName", BusinessTitle is its JobTitle and
//     EmployeeType (empty, Employee or Contractor, exact case) its EmployeeType; CreatedBy is
//     the caller. PersonCode, unique in the organization and not in the row, is set to the new
//     PersonIdentifier: an Identifier that is already the PersonCode of a person of the
//     organization is a problem of its row under Identifier. Location is kept as the person
//     field named "Location".
//   - A problem the engine still finds as the records are written (another writer stored a
//     user with a row's Email, say, after the import looked it up) is reported under the file
//     row and the import's column the record comes from, its message naming the record ("the
//     row's User: another User already has Email …").
//   - The organization is the caller's own (an operator's too). An empty array imports
//     nothing and answers 200.
package people
