package people

import (
	"context"

	"credo/engine"
)

// write inserts the records that plan decided in one transaction, each resource's built as
// its load reads them (see batch): the users, then the persons, the person fields and the
// connections. A problem the engine still finds in a record (another writer stored a user
// with a row's Email, a person with its PersonCode, or a connection, after plan looked them
// up) is reported under the file row and the import's column that the record comes from
// (see batch.columns).
func (im *importer) write(ctx context.Context, st *engine.Store, by string) error {
	userIDs, managers, existing := im.userIDs, im.managers, im.existing
	var promote [][]any
	for i, mgr := range managers {
		if isManager, ok := existing[[2]string{mgr, userIDs[i]}]; mgr != "" && ok && !isManager {
			promote = append(promote, []any{mgr, userIDs[i]})
		}
	}
	createdBy, _ := engine.ParseUUID(by)
	batches := []*batch{{r: im.m.user, columns: userColumns, column: "Email", of: func(i int) map[string]any {
		r := im.rows[i]
		if _, ok := im.users[im.same(r.Email)]; ok {
			return nil
		}
		return map[string]any{"UserIdentifier": userIDs[i], "Email": r.Email, "FirstName": r.FirstName,
			"LastName": r.LastName, "FullName": fullName(r)}
	}}, {r: im.m.person, columns: personColumns, column: rowMember, of: func(i int) map[string]any {
		r := im.rows[i]
		person := map[string]any{"PersonIdentifier": im.ids[i], "UserIdentifier": userIDs[i], "OrganizationIdentifier": im.org,
			"FullName": fullName(r), "PersonCode": im.ids[i], "JobTitle": r.BusinessTitle, "EmployeeType": r.EmployeeType}
		if createdBy != "" {
			person["CreatedBy"] = createdBy
		}
		return person
	}}, {r: im.m.field, column: "Location", of: func(i int) map[string]any {
		if im.rows[i].Location == "" {
			return nil
		}
		return map[string]any{"FieldIdentifier": engine.NewID(), "OrganizationIdentifier": im.org,
			"UserIdentifier": userIDs[i], "FieldName": LocationField, "FieldValue": im.rows[i].Location}
	}}, {r: im.m.conn, column: "Manager", of: func(i int) map[string]any {
		mgr := managers[i]
		if _, ok := existing[[2]string{mgr, userIDs[i]}]; mgr == "" || ok {
			return nil
		}
		return map[string]any{"FromUserIdentifier": mgr, "ToUserIdentifier": userIDs[i], "IsManager": true}
	}}}
	return st.Transaction(ctx, func(tx *engine.Store) error {
		for _, b := range batches {
			if err := b.insert(ctx, tx, len(im.rows)); err != nil {
				return err
			}
		}
		for _, key := range promote {
			d, err := im.m.conn.DraftOf(map[string]any{"IsManager": true})
			if err != nil {
				return err
			}
			if err := tx.Patch(ctx, im.m.conn, key, d, engine.AllOrganizations()); err != nil {
				return err
			}
		}
		return nil
	})
}

// The import's columns of the members of the records it writes, by the member a problem of
// the engine names: a unique constraint's problem is named by its first member, so a
// person's OrganizationIdentifier stands for its (OrganizationIdentifier, PersonCode) and its
// UserIdentifier for its (UserIdentifier, OrganizationIdentifier): the row's Identifier, and
// the row's Email whose user already has a person here.
var (
	userColumns = map[string]string{"Email": "Email", "FirstName": "FirstName", "LastName": "LastName",
		"FullName": "LastName", "UserIdentifier": "Email"}
	personColumns = map[string]string{"PersonIdentifier": "Identifier", "PersonCode": "Identifier",
		"OrganizationIdentifier": "Identifier", "UserIdentifier": "Email", "FullName": "LastName",
		"JobTitle": "BusinessTitle", "EmployeeType": "EmployeeType"}
)
