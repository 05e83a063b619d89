package security

import (
	"context"
	"fmt"
	"strings"
	"time"

	"credo/auth"
	"credo/engine"
)

// DefaultSecretDays is how many days a client secret stays usable when SecretOptions names
// none (api.md, Authentication 8).
const DefaultSecretDays = 90

// MaxSecretDays is the longest validity CreateSecret gives a secret: ten years. A secret is a
// long-lived credential; one that outlives a decade of key rotation is a mistake to refuse.
const MaxSecretDays = 3650

// The defaults of CreateSecret when the options name no user or organization.
const (
	// DefaultOrganizationCode is the OrganizationCode of the organization CreateSecret uses
	// (and creates) when neither the options nor an existing user name one.
	DefaultOrganizationCode = "default"
	// DefaultEmail and DefaultOperatorEmail are the user's Email when the options name none.
	DefaultEmail         = "client@localhost"
	DefaultOperatorEmail = "operator@localhost"
)

// SecretOptions says whom CreateSecret makes a secret for.
type SecretOptions struct {
	// Email is the user's Email; DefaultEmail (DefaultOperatorEmail for an operator) when empty.
	// A user with this Email is reused, otherwise created.
	Email string
	// Organization is the organization's identifier, created when missing. Empty means the
	// organization of the user's first person, else the one with DefaultOrganizationCode.
	Organization string
	// Operator makes the user's person in the organization an operator (IsOperator). It never
	// takes the flag away from an existing person.
	Operator bool
	// Days is the secret's validity, 1 to MaxSecretDays; the zero value means DefaultSecretDays
	// (`credo secret create` refuses --days 0 itself rather than mean the default).
	Days int
}

// SecretResult is what CreateSecret made; Secret is shown once and never stored. Its JSON form
// is the output of `credo secret create --json` (decisions §1).
type SecretResult struct {
	// Identifier is the secret's SecretIdentifier, by which RevokeSecret can also name it.
	Identifier             string          `json:"-"`
	Secret                 string          `json:"Secret"`
	UserIdentifier         string          `json:"UserIdentifier"`
	OrganizationIdentifier string          `json:"OrganizationIdentifier"`
	Expires                engine.DateTime `json:"Expires"`
}

// CreateSecret creates a client secret for a user acting in an organization of the store's
// partition, creating the organization, the user and the user's person there when missing,
// all in one transaction. Only the secret's hash is stored.
func CreateSecret(ctx context.Context, store *engine.Store, opts SecretOptions) (SecretResult, error) {
	if opts.Days == 0 {
		opts.Days = DefaultSecretDays
	}
	if opts.Days < 1 || opts.Days > MaxSecretDays {
		return SecretResult{}, fmt.Errorf("security: create secret: days %d is outside 1 to %d", opts.Days, MaxSecretDays)
	}
	if opts.Email == "" {
		opts.Email = DefaultEmail
		if opts.Operator {
			opts.Email = DefaultOperatorEmail
		}
	}
	if opts.Organization != "" {
		org, err := engine.ParseUUID(opts.Organization)
		if err != nil {
			return SecretResult{}, fmt.Errorf("security: create secret: organization: %v", err)
		}
		opts.Organization = org
	}
	rs, err := resolveRecords(store.Registry())
	if err != nil {
		return SecretResult{}, err
	}
	now := time.Now()
	var out SecretResult
	err = store.Transaction(ctx, func(tx *engine.Store) error {
		userID, err := rs.ensureUser(ctx, tx, opts.Email)
		if err != nil {
			return err
		}
		orgID, err := rs.ensureOrganization(ctx, tx, opts.Organization, userID)
		if err != nil {
			return err
		}
		if err := rs.ensurePerson(ctx, tx, userID, orgID, opts.Email, opts.Operator); err != nil {
			return err
		}
		secret, rec, err := auth.NewSecretRecord(tx.Partition, userID, orgID, now, time.Duration(opts.Days)*24*time.Hour)
		if err != nil {
			return err
		}
		_, err = insert(ctx, tx, rs.clientSecret, map[string]any{
			"SecretIdentifier": rec.Identifier, "SecretHash": rec.Hash, "UserIdentifier": userID,
			"OrganizationIdentifier": orgID, "Created": dateTime(rec.Created), "Expires": dateTime(rec.Expires),
		})
		if err != nil {
			return err
		}
		out = SecretResult{Identifier: rec.Identifier, Secret: secret, UserIdentifier: userID, OrganizationIdentifier: orgID, Expires: dateTime(rec.Expires)}
		return nil
	})
	if err != nil {
		return SecretResult{}, fmt.Errorf("security: create secret in %s: %w", store.Partition, err)
	}
	return out, nil
}

// ensureUser returns the user with an Email, creating it when missing. The Email identifies
// the user as its unique constraint compares it, ignoring ASCII case: --email Ann@Example.com
// finds ann@example.com.
func (rs *records) ensureUser(ctx context.Context, tx *engine.Store, email string) (string, error) {
	users := rs.user
	found, err := all(ctx, tx, users, []string{"UserIdentifier"}, "Email", same(email))
	if err != nil {
		return "", err
	}
	if len(found) > 0 {
		return str(users, found[0], "UserIdentifier"), nil
	}
	name, _, _ := strings.Cut(email, "@")
	rec, err := insert(ctx, tx, users, map[string]any{"Email": email, "FullName": name})
	if err != nil {
		return "", err
	}
	return str(users, rec, "UserIdentifier"), nil
}

// ensureOrganization returns the organization a secret acts in: id (created when missing), or
// the organization of the user's first person, or the default organization.
func (rs *records) ensureOrganization(ctx context.Context, tx *engine.Store, id, userID string) (string, error) {
	orgs := rs.organization
	if id != "" {
		ok, err := tx.Exists(ctx, orgs, []any{id}, engine.AllOrganizations())
		if err != nil || ok {
			return id, err
		}
		_, err = insert(ctx, tx, orgs, map[string]any{"OrganizationIdentifier": id, "OrganizationName": "Organization " + id[:8]})
		return id, err
	}
	people := rs.person
	persons, err := all(ctx, tx, people, []string{"OrganizationIdentifier"}, "UserIdentifier", userID)
	if err != nil {
		return "", err
	}
	if len(persons) > 0 {
		return str(people, persons[0], "OrganizationIdentifier"), nil
	}
	found, err := all(ctx, tx, orgs, []string{"OrganizationIdentifier"}, "OrganizationCode", DefaultOrganizationCode)
	if err != nil {
		return "", err
	}
	if len(found) > 0 {
		return str(orgs, found[0], "OrganizationIdentifier"), nil
	}
	rec, err := insert(ctx, tx, orgs, map[string]any{"OrganizationCode": DefaultOrganizationCode, "OrganizationName": "Default organization"})
	if err != nil {
		return "", err
	}
	return str(orgs, rec, "OrganizationIdentifier"), nil
}

// ensurePerson gives the user a person in the organization, an operator one when asked.
func (rs *records) ensurePerson(ctx context.Context, tx *engine.Store, userID, orgID, email string, operator bool) error {
	people := rs.person
	found, err := all(ctx, tx, people, []string{"PersonIdentifier", "IsOperator"}, "UserIdentifier", userID, "OrganizationIdentifier", orgID)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		name, _, _ := strings.Cut(email, "@")
		_, err := insert(ctx, tx, people, map[string]any{
			"UserIdentifier": userID, "OrganizationIdentifier": orgID, "FullName": name, "IsOperator": operator,
		})
		return err
	}
	if isOp, _ := found[0].Get(people, "IsOperator").(bool); operator && !isOp {
		key := []any{str(people, found[0], "PersonIdentifier")}
		d, err := people.DraftOf(map[string]any{"IsOperator": true})
		if err != nil {
			return err
		}
		return tx.Patch(ctx, people, key, d, engine.AllOrganizations())
	}
	return nil
}

// RevokeSecret ends a client secret, named by its SecretIdentifier or by the secret itself,
// and every unexpired token and cookie derived from it, cookies made from cookies included.
// Other processes refuse them within auth.MaxRevocationTTL. Revoking a revoked secret changes
// nothing; an unknown one is an engine.ErrNotFound.
func RevokeSecret(ctx context.Context, store *engine.Store, secretOrIdentifier string) error {
	rs, err := resolveRecords(store.Registry())
	if err != nil {
		return err
	}
	r := rs.clientSecret
	member, value := "SecretHash", auth.HashSecret(secretOrIdentifier)
	if id, err := engine.ParseUUID(secretOrIdentifier); err == nil {
		member, value = "SecretIdentifier", id
	}
	now := time.Now()
	err = store.Transaction(ctx, func(tx *engine.Store) error {
		found, err := all(ctx, tx, r, []string{"SecretIdentifier", "Revoked", "Expires"}, member, value)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return fmt.Errorf("no such secret: %w", engine.ErrNotFound)
		}
		id := str(r, found[0], "SecretIdentifier")
		if found[0].Get(r, "Revoked") == nil {
			d, err := r.DraftOf(map[string]any{"Revoked": dateTime(now)})
			if err != nil {
				return err
			}
			if err := tx.Patch(ctx, r, []any{id}, d, engine.AllOrganizations()); err != nil {
				return err
			}
		}
		// The secret's own identifier is revoked too: every token and cookie carries it in its
		// lineage, so one made while this transaction ran is refused as well. The row must
		// outlive the last token the secret could have made.
		last := when(r, found[0], "Expires").Add(auth.MaxLifetime * time.Second)
		if _, err := rs.revoke(ctx, tx, id, now, last); err != nil {
			return err
		}
		issued := rs.issuedToken
		tokens, err := all(ctx, tx, issued, []string{"TokenIdentifier", "Expires"}, "SecretIdentifier", id)
		if err != nil {
			return err
		}
		for _, t := range tokens {
			if exp := when(issued, t, "Expires"); exp.After(now) {
				if _, err := rs.revoke(ctx, tx, str(issued, t, "TokenIdentifier"), now, exp); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("security: revoke secret in %s: %w", store.Partition, err)
	}
	return nil
}

// secrets implements auth.Secrets over ClientSecret records.
type secrets struct{ s *Security }

var _ auth.Secrets = secrets{}

func (x secrets) SecretByHash(ctx context.Context, partition, hash string) (*auth.SecretRecord, error) {
	st, err := x.s.store(partition)
	if err != nil {
		return nil, err
	}
	r := x.s.rec.clientSecret
	found, err := all(ctx, st, r, []string{"SecretIdentifier", "SecretHash", "UserIdentifier", "OrganizationIdentifier", "Created", "Expires", "Revoked"}, "SecretHash", hash)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	rec := found[0]
	out := &auth.SecretRecord{
		Identifier: str(r, rec, "SecretIdentifier"), Hash: str(r, rec, "SecretHash"),
		UserIdentifier: str(r, rec, "UserIdentifier"), OrganizationIdentifier: str(r, rec, "OrganizationIdentifier"),
		Partition: partition, Created: when(r, rec, "Created"), Expires: when(r, rec, "Expires"),
	}
	if rec.Get(r, "Revoked") != nil {
		t := when(r, rec, "Revoked")
		out.Revoked = &t
	}
	return out, nil
}
