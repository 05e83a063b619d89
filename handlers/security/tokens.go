package security

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/observe"
	"credo/handlers/problem"
	"credo/handlers/request"
)

// generateRequest is the body of tokens/generate (api.md, Security operations).
type generateRequest struct {
	Debug        bool    `json:"Debug"`
	Secret       *string `json:"Secret"`
	Lifetime     *int    `json:"Lifetime"`
	Organization *string `json:"Organization"`
	Agent        *string `json:"Agent"`
	Subject      *string `json:"Subject"`
}

// tokenResponse is the answer of tokens/generate.
type tokenResponse struct {
	AccessToken string `json:"AccessToken"`
	TokenType   string `json:"TokenType"`
	ExpiresIn   int    `json:"ExpiresIn"`
	Lifetime    string `json:"Lifetime"`
}

// generate serves tokens/generate: the body is checked (400), then the secret (401), then
// what only operators may ask (403).
func (h *handler) generate(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, pa, err := h.partition(r)
	if err != nil {
		return err
	}
	if err := h.s.limits.Credentials.Allow(h.s.limits.Clients.Address(r)); err != nil {
		return err
	}
	body, err := request.Body(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	// The body's problems come in one 400: those of decoding, then the checks of the members
	// that decoded.
	var req generateRequest
	bad := &engine.ValidationError{}
	if err := decodeStrict(body, &req, "Debug", "Secret", "Lifetime", "Organization", "Agent", "Subject"); err != nil {
		if !errors.As(err, &bad) || len(bad.Fields) == 0 {
			return err
		}
	}
	lifetime := auth.DefaultLifetime
	if req.Lifetime != nil {
		lifetime = *req.Lifetime
	}
	if err := auth.ValidateLifetime(lifetime); err != nil && bad.Fields["Lifetime"] == nil {
		bad.Add("Lifetime", err.Error())
	}
	org := optionalUUID(bad, "Organization", req.Organization)
	agent := optionalUUID(bad, "Agent", req.Agent)
	subject := optionalUUID(bad, "Subject", req.Subject)
	if agent != "" && subject != "" {
		bad.Add("Subject", "give Agent or Subject, not both: a token acts for one user")
	}
	if !bad.Empty() {
		return bad
	}
	secret := ""
	if req.Secret != nil {
		secret = *req.Secret
	}
	if secret != "" {
		if err := h.s.limits.Secret.Allow(auth.HashSecret(secret)); err != nil {
			return err
		}
	}
	now := h.s.now()
	rec, err := auth.CheckSecret(ctx, secrets{h.s}, st.Partition, secret, now)
	if err != nil {
		h.s.failed(r, st.Partition, failSecret, err)
		return err
	}
	owner, err := h.s.account(ctx, st.Partition, rec.UserIdentifier, rec.OrganizationIdentifier, now)
	if err != nil {
		// A secret whose user may no longer act is a refused secret like an unknown one.
		h.s.failed(r, st.Partition, failSecret, err)
		return err
	}
	claims := auth.Claims{Subject: rec.UserIdentifier, Organization: rec.OrganizationIdentifier, Partition: st.Partition,
		Debug: req.Debug, Secret: rec.Identifier}
	member, acting := "Subject", subject
	if agent != "" {
		member, acting = "Agent", agent
	}
	if org != "" || acting != "" {
		if !owner.Operator {
			return forbidden("only operators may generate tokens with Organization, Agent or Subject")
		}
		if acting != "" && owner.away != "" {
			// As checkActing would refuse the token at once (docs/security.md).
			return forbidden("only an operator with a person in the secret's organization %s may generate tokens with %s: %s",
				rec.OrganizationIdentifier, member, owner.away)
		}
		if claims.Subject, claims.Organization, err = h.actAs(ctx, st, rec, member, acting, org); err != nil {
			return err
		}
	}
	acct := owner
	if claims.Subject != rec.UserIdentifier || claims.Organization != rec.OrganizationIdentifier {
		if acct, err = h.s.account(ctx, st.Partition, claims.Subject, claims.Organization, now); err != nil {
			if acting != "" && errors.Is(err, auth.ErrUnauthenticated) {
				return badMember(member, "%v", err) // the user acted for may not act (withdrawn), not the operator
			}
			return err
		}
	}
	claims.Roles = acct.Roles
	if claims.Email, err = h.s.rec.userEmail(ctx, st, claims.Subject); err != nil {
		if acting != "" && errors.Is(err, auth.ErrUnauthenticated) {
			return badMember(member, "the user %s does not exist", acting)
		}
		return err
	}
	if req.Debug && claims.Subject != rec.UserIdentifier {
		claims.UserDebug = fmt.Sprintf("user %s <%s> in organization %s of partition %s, as %s of operator %s",
			claims.Subject, claims.Email, claims.Organization, claims.Partition, strings.ToLower(member), rec.UserIdentifier)
	}
	token, issuedClaims, err := pa.tokens.Issue(claims, lifetime)
	if err != nil {
		return err
	}
	err = h.s.rec.register(ctx, st, issued{ID: issuedClaims.ID, Kind: string(auth.CredentialBearer), User: claims.Subject,
		Organization: claims.Organization, Secret: rec.Identifier, Issued: now, Expires: issuedClaims.Expires})
	if err != nil {
		return err
	}
	observe.SetUser(r, rec.UserIdentifier)
	observe.TokenIssued(ctx, observe.KindToken)
	return problem.JSON(w, http.StatusOK, tokenResponse{
		AccessToken: token, TokenType: "Bearer", ExpiresIn: lifetime, Lifetime: auth.LifetimeText(lifetime),
	})
}

// actAs resolves an operator's Organization and Agent or Subject (member names which one, ""
// for neither) into the token's user and organization. An organization or user that does not
// exist, or a user without a person in the organization, is a 400 naming the member.
func (h *handler) actAs(ctx context.Context, st *engine.Store, rec *auth.SecretRecord, member, user, org string) (string, string, error) {
	if org != "" {
		ok, err := st.Exists(ctx, h.s.rec.organization, []any{org}, engine.AllOrganizations())
		if err != nil {
			return "", "", err
		}
		if !ok {
			return "", "", badMember("Organization", "the organization %s does not exist", org)
		}
	}
	if user == "" {
		return rec.UserIdentifier, org, nil
	}
	people := h.s.rec.person
	persons, err := all(ctx, st, people, []string{"OrganizationIdentifier"}, "UserIdentifier", user)
	if err != nil {
		return "", "", err
	}
	var orgs []string
	for _, p := range persons {
		orgs = append(orgs, str(people, p, "OrganizationIdentifier"))
	}
	switch {
	case len(orgs) == 0:
		return "", "", badMember(member, "the user %s has no person in the partition", user)
	case org != "":
		if !slices.Contains(orgs, org) {
			return "", "", badMember(member, "the user %s has no person in organization %s", user, org)
		}
	case slices.Contains(orgs, rec.OrganizationIdentifier):
		org = rec.OrganizationIdentifier
	case len(orgs) == 1:
		org = orgs[0]
	default:
		return "", "", badMember("Organization", "the user %s has persons in %d organizations; name one in Organization", user, len(orgs))
	}
	return user, org, nil
}

// userEmail returns a user's Email; a user that no longer exists cannot be issued a token.
func (rs *records) userEmail(ctx context.Context, st *engine.Store, userID string) (string, error) {
	users := rs.user
	email, err := members(users, "Email")
	if err != nil {
		return "", err
	}
	rec, err := st.Get(ctx, users, []any{userID}, email, engine.AllOrganizations())
	if engine.IsNotFound(err) {
		return "", unauthenticated(auth.ReasonUnknown, "the user %s no longer exists", userID)
	}
	if err != nil {
		return "", err
	}
	return str(users, rec, "Email"), nil
}

// optionalUUID checks a nullable uuid member, returning it lower-case ("" when null, or when
// it has a problem: one already in bad, or the one it adds there).
func optionalUUID(bad *engine.ValidationError, member string, v *string) string {
	if v == nil || bad.Fields[member] != nil {
		return ""
	}
	id, err := engine.ParseUUID(*v)
	if err != nil {
		// The value is not echoed: a client that pasted its secret into the wrong member
		// must not see it written back (and perhaps logged) by a proxy.
		bad.Add(member, member+" must be a UUID")
		return ""
	}
	return id
}

// jwtDescription is the Jwt member of tokens/introspect.
type jwtDescription struct {
	Identifier string          `json:"Identifier"`
	Audience   string          `json:"Audience"`
	Issuer     string          `json:"Issuer"`
	Subject    string          `json:"Subject"`
	Roles      []string        `json:"Roles"`
	IssuedAt   engine.DateTime `json:"IssuedAt"`
	Expiry     engine.DateTime `json:"Expiry"`
	Lifetime   string          `json:"Lifetime"`
}

// principalDescription is the Principal member of tokens/introspect.
type principalDescription struct {
	User         named    `json:"User"`
	Organization named    `json:"Organization"`
	Partition    string   `json:"Partition"`
	Roles        []string `json:"Roles"`
	Operator     bool     `json:"Operator"`
	Credential   string   `json:"Credential"`
}

type named struct {
	Identifier string  `json:"Identifier"`
	Email      string  `json:"Email,omitempty"`
	Name       *string `json:"Name"`
}

// introspect serves tokens/introspect: the bearer token's claims (null for a cookie) and the
// principal as the request was authenticated.
func (h *handler) introspect(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, pa, err := h.partition(r)
	if err != nil {
		return err
	}
	p := auth.FromContext(ctx)
	if p == nil {
		return unauthenticated(auth.ReasonMissing, "no credential")
	}
	var jwt *jwtDescription
	if p.Credential == auth.CredentialBearer {
		c, err := pa.tokens.Verify(bearer(r), st.Partition)
		if err != nil {
			return err
		}
		issued := c.IssuedAt.Add(auth.ClockSkew)
		jwt = &jwtDescription{
			Identifier: c.ID, Audience: c.Audience, Issuer: c.Issuer, Subject: c.Subject,
			Roles: nonNil(c.Roles), IssuedAt: dateTime(c.IssuedAt), Expiry: dateTime(c.Expires),
			Lifetime: auth.LifetimeText(int(c.Expires.Sub(issued) / time.Second)),
		}
	}
	uName, err := lookupName(ctx, st, h.s.rec.user, p.UserIdentifier, "FullName")
	if err != nil {
		return err
	}
	orgName, err := lookupName(ctx, st, h.s.rec.organization, p.OrganizationIdentifier, "OrganizationName")
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, introspection{jwt, principalDescription{
		User:         named{Identifier: p.UserIdentifier, Email: p.Email, Name: uName},
		Organization: named{Identifier: p.OrganizationIdentifier, Name: orgName},
		Partition:    p.Partition, Roles: nonNil(p.Roles), Operator: p.Operator, Credential: string(p.Credential),
	}})
}

// lookupName returns a name member of the record with id, nil when there is none.
func lookupName(ctx context.Context, st *engine.Store, r *engine.Resource, id, member string) (*string, error) {
	f, err := members(r, member)
	if err != nil {
		return nil, err
	}
	rec, err := st.Get(ctx, r, []any{id}, f, engine.AllOrganizations())
	if engine.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := str(r, rec, member)
	return &s, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// bearer returns the token of an "Authorization: Bearer" header, "" without one.
func bearer(r *http.Request) string {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// validate serves tokens/validate: the report of a token sent as the body (text or a JSON
// string) or, without a body, as the bearer token. A token that is not a JWT is a 400.
func (h *handler) validate(w http.ResponseWriter, r *http.Request) error {
	_, pa, err := h.partition(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	token, err := textBody(body)
	if err != nil {
		return err
	}
	if token == "" {
		token = bearer(r)
	}
	if token == "" {
		return problem.New(http.StatusBadRequest, `Send the token as the body, or as "Authorization: Bearer <token>".`)
	}
	rep, err := pa.tokens.Report(token)
	if err != nil {
		return err
	}
	return problem.JSON(w, http.StatusOK, rep)
}

// revoke serves DELETE security/tokens/{jti}: a caller revokes its own tokens and cookies,
// an operator any identifier. Another caller's identifier, or an unknown one, is a 404 so that
// identifiers cannot be probed. The revocation holds at once on this process and within
// auth.MaxRevocationTTL on every other.
func (h *handler) revoke(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, _, err := h.partition(r)
	if err != nil {
		return err
	}
	p := auth.FromContext(ctx)
	if p == nil {
		return unauthenticated(auth.ReasonMissing, "no credential")
	}
	id, err := request.PathValue(r, "jti")
	if err != nil {
		return err
	}
	now := h.s.now()
	t, err := h.s.rec.lookupIssued(ctx, st, id)
	if err != nil {
		return err
	}
	expires := now.Add(auth.MaxLifetime * time.Second) // unknown: as long as any token lives
	switch {
	case t != nil && (t.User == p.UserIdentifier || p.Operator):
		expires = t.Expires
	case t == nil && (id == p.TokenID || p.Operator) && id != "":
	default:
		return problem.New(http.StatusNotFound, "No token or cookie of yours has the identifier %s.", engine.Quoted(id))
	}
	var revoked []string
	err = st.Transaction(ctx, func(tx *engine.Store) error {
		revoked, err = h.s.rec.revoke(ctx, tx, id, now, expires)
		return err
	})
	if err != nil {
		if errors.Is(err, engine.ErrInvalid) {
			return problem.New(http.StatusNotFound, "No token or cookie has the identifier %s.", engine.Quoted(id))
		}
		return err
	}
	for _, r := range append(revoked, id) {
		h.s.revocations.Forget(st.Partition, r)
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
