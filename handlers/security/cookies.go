package security

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"credo/auth"
	"credo/engine"
	"credo/handlers/observe"
	"credo/handlers/problem"
)

// CookieLifetime is the longest a session cookie lives; it never outlives the credential
// that asked for it.
const CookieLifetime = 24 * time.Hour

// CookieName returns the name of a partition's session cookie, which the Authenticator reads:
// __Host-credo_session-<partition> (auth.SessionCookieName).
func CookieName(partition string) string {
	return auth.SessionCookieName(auth.DefaultCookieName, partition)
}

// generateCookie serves cookies/generate: a session cookie for the caller, set with
// Set-Cookie as CookieName(partition) (HttpOnly, Secure, SameSite=Lax, Path=/ and no Domain,
// as the __Host- prefix requires) and returned as {"Token"}.
func (h *handler) generateCookie(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, pa, err := h.partition(r)
	if err != nil {
		return err
	}
	p := auth.FromContext(ctx)
	if p == nil {
		return unauthenticated(auth.ReasonMissing, "no credential")
	}
	if err := h.s.limits.Credentials.Allow(h.s.limits.Clients.Address(r)); err != nil {
		return err
	}
	now := h.s.now()
	expiry := now.Add(CookieLifetime)
	// The cookie's lineage: revoking the secret, the token or the cookie it comes from ends it.
	var secret, token, parent string
	switch p.Credential {
	case auth.CredentialBearer:
		c, err := pa.tokens.Verify(bearer(r), st.Partition)
		if err != nil {
			return err
		}
		expiry = earlier(expiry, c.Expires)
		secret, token, parent = c.Secret, c.ID, c.ID
		if secret == "" {
			t, err := h.s.rec.lookupIssued(ctx, st, c.ID)
			if err != nil {
				return err
			}
			if t != nil {
				secret = t.Secret
			}
		}
	case auth.CredentialCookie:
		ck, err := r.Cookie(pa.authn.SessionCookie(st.Partition))
		if err != nil {
			return unauthenticated(auth.ReasonMissing, "no session cookie")
		}
		c, err := pa.cookies.Validate(ck.Value, st.Partition)
		if err != nil {
			return err
		}
		expiry = earlier(expiry, c.Expiry)
		secret, token, parent = c.Secret, c.Token, c.Identifier
	default:
		return forbidden("only a bearer token or a session cookie can make a session cookie")
	}
	value, payload, err := pa.cookies.Encode(auth.CookiePayload{
		User: p.UserIdentifier, Email: p.Email, Organization: p.OrganizationIdentifier,
		Partition: p.Partition, Roles: nonNil(p.Roles), Created: now.UTC(), Expiry: expiry.UTC(),
		Secret: secret, Token: token, Parent: parentOf(p.Credential, parent),
	})
	if err != nil {
		return err
	}
	err = h.s.rec.register(ctx, st, issued{ID: payload.Identifier, Kind: string(auth.CredentialCookie), User: p.UserIdentifier,
		Organization: p.OrganizationIdentifier, Secret: secret, Parent: parent, Issued: now, Expires: expiry})
	if err != nil {
		return err
	}
	observe.TokenIssued(ctx, observe.KindCookie)
	http.SetCookie(w, &http.Cookie{
		Name: pa.authn.SessionCookie(st.Partition), Value: value, Path: "/", Expires: expiry,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
	return problem.JSON(w, http.StatusOK, struct {
		Token string `json:"Token"`
	}{value})
}

// parentOf is the Parent of a new cookie's payload: the cookie it was made from; a cookie
// made from a token names the token in Token only.
func parentOf(c auth.Credential, parent string) string {
	if c == auth.CredentialCookie {
		return parent
	}
	return ""
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// cookieToken returns the cookie token sent as the body (text or a JSON string), or else the
// value of the request's cookie name (the partition's session cookie).
func cookieToken(w http.ResponseWriter, r *http.Request, name string) (string, error) {
	body, err := readBody(w, r)
	if err != nil {
		return "", err
	}
	token, err := textBody(body)
	if err != nil {
		return "", err
	}
	if token == "" {
		if ck, err := r.Cookie(name); err == nil {
			token = ck.Value
		}
	}
	if token == "" {
		return "", problem.New(http.StatusBadRequest, "Send the cookie token as the body, or as the %s cookie.", name)
	}
	if _, err := auth.DecodeToken(token); err != nil {
		return "", problem.New(http.StatusBadRequest, "The cookie token is not unpadded base64url: %v", err)
	}
	return token, nil
}

// decodeCookie serves cookies/decode: {"Cookie": payload}, the payload as a JSON object when
// decode (the default) and as its JSON text otherwise. An encrypted cookie is read only with
// decrypt; a cookie that cannot be read (not ours, altered) is a 400 saying why.
func (h *handler) decodeCookie(w http.ResponseWriter, r *http.Request) error {
	st, pa, err := h.partition(r)
	if err != nil {
		return err
	}
	params, err := boolParams(r, map[string]bool{"decode": true, "decrypt": false})
	if err != nil {
		return err
	}
	token, err := cookieToken(w, r, pa.authn.SessionCookie(st.Partition))
	if err != nil {
		return err
	}
	payload, err := pa.cookies.Decode(token, st.Partition, params["decrypt"])
	if err != nil {
		if errors.Is(err, auth.ErrMalformed) {
			return badMember("decrypt", "%s", err.Error())
		}
		return problem.New(http.StatusBadRequest, "The cookie cannot be read: %s.", err.Error())
	}
	var out any = viewOf(payload)
	if !params["decode"] {
		j, err := json.Marshal(payload)
		if err != nil {
			return fmt.Errorf("security: encode cookie payload: %w", err)
		}
		out = string(j)
	}
	return problem.JSON(w, http.StatusOK, struct {
		Cookie any `json:"Cookie"`
	}{out})
}

// cookieReport is the answer of cookies/validate.
type cookieReport struct {
	Valid                 bool   `json:"Valid"`
	Reason                string `json:"Reason,omitempty"`
	SignatureVerification string `json:"SignatureVerification"`
	// ExpiryVerification is "Not Expired (N minutes remaining)", "Expired", or "Unknown" when
	// the cookie cannot be read.
	ExpiryVerification string           `json:"ExpiryVerification"`
	Expiry             *engine.DateTime `json:"Expiry"`
	Cookie             *cookieView      `json:"Cookie,omitempty"`
}

// cookieView is a cookie's payload as the API answers it: its instants in the API's datetime
// form (decisions §3: at most 7 fraction digits, an offset), not Go's nanoseconds and `Z`.
type cookieView struct {
	Identifier   string          `json:"Identifier"`
	User         string          `json:"User"`
	Email        string          `json:"Email"`
	Organization string          `json:"Organization"`
	Partition    string          `json:"Partition"`
	Roles        []string        `json:"Roles"`
	Created      engine.DateTime `json:"Created"`
	Expiry       engine.DateTime `json:"Expiry"`
	Secret       string          `json:"Secret,omitempty"`
	Token        string          `json:"Token,omitempty"`
	Parent       string          `json:"Parent,omitempty"`
}

// viewOf returns the answer form of p.
func viewOf(p *auth.CookiePayload) *cookieView {
	return &cookieView{Identifier: p.Identifier, User: p.User, Email: p.Email, Organization: p.Organization,
		Partition: p.Partition, Roles: nonNil(p.Roles), Created: dateTime(p.Created), Expiry: dateTime(p.Expiry),
		Secret: p.Secret, Token: p.Token, Parent: p.Parent}
}

// validateCookie serves cookies/validate: whether a cookie is genuine, of this partition,
// unexpired, not revoked and of a user who may still act (see account), with its payload when
// decode (the default).
func (h *handler) validateCookie(w http.ResponseWriter, r *http.Request) error {
	st, pa, err := h.partition(r)
	if err != nil {
		return err
	}
	params, err := boolParams(r, map[string]bool{"decode": true})
	if err != nil {
		return err
	}
	token, err := cookieToken(w, r, pa.authn.SessionCookie(st.Partition))
	if err != nil {
		return err
	}
	rep := cookieReport{SignatureVerification: "Failed", ExpiryVerification: "Unknown"}
	payload, err := pa.cookies.Decode(token, st.Partition, true)
	if err != nil {
		rep.Reason = err.Error()
		return problem.JSON(w, http.StatusOK, rep)
	}
	rep.SignatureVerification = "Passed"
	exp := dateTime(payload.Expiry)
	rep.Expiry = &exp
	if left := payload.Expiry.Sub(h.s.now()); left > 0 {
		rep.ExpiryVerification = fmt.Sprintf("Not Expired (%d minutes remaining)", int64(left.Minutes()))
	} else {
		rep.ExpiryVerification = "Expired"
	}
	switch {
	case payload.Partition != st.Partition:
		rep.Reason = fmt.Sprintf("cookie of another partition (%s)", payload.Partition)
	case rep.ExpiryVerification == "Expired":
		rep.Reason = "cookie expired on " + exp.String()
	default:
		rep.Valid = true
		for i, id := range append([]string{payload.Identifier}, payload.Lineage()...) {
			revoked, err := h.s.revocations.IsRevoked(r.Context(), st.Partition, id)
			if err != nil {
				return err
			}
			if revoked {
				rep.Valid, rep.Reason = false, "cookie revoked"
				if i > 0 {
					rep.Reason = "the credential this cookie was made from was revoked"
				}
				break
			}
		}
		if rep.Valid {
			// A cookie that authentication would refuse, its user's access being withdrawn or
			// its person gone, is not valid either (the same account check, cache included).
			_, err := h.s.accounts.Account(r.Context(), st.Partition, payload.User, payload.Organization)
			if err == nil {
				// Nor is one made from a token an operator generated for the user, once that
				// operator may no longer act for others (checkActing).
				err = h.s.checkActing(r.Context(), st.Partition, payload.Secret, payload.User)
			}
			switch {
			case errors.Is(err, auth.ErrUnauthenticated):
				rep.Valid, rep.Reason = false, err.Error()
			case err != nil:
				return err
			}
		}
	}
	if params["decode"] {
		rep.Cookie = viewOf(payload)
	}
	return problem.JSON(w, http.StatusOK, rep)
}
