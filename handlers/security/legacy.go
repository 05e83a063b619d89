package security

import (
	"net/http"
	"strings"

	"credo/auth"
)

// LegacyAuthenticator returns the credential check of the version-1 API for a partition
// (decisions §12): `Authorization: Bearer` carrying a v2 access token, or a raw client secret
// as the original platform allowed. No credential gives (nil, nil); the caller answers 401.
// An Authorization header of another scheme (Basic) is refused as malformed, as version 2
// refuses it, and counted as credential "other".
// Secret authentication is rate-limited per client address and per secret (limit.V1Secret),
// and the principal's roles are those of the secret's organization only.
func (s *Security) LegacyAuthenticator(partition string) func(*http.Request) (*auth.Principal, error) {
	return func(r *http.Request) (*auth.Principal, error) {
		h := r.Header.Get("Authorization")
		scheme, value, _ := strings.Cut(h, " ")
		value = strings.TrimSpace(value)
		if h != "" && !strings.EqualFold(scheme, "Bearer") {
			err := unauthenticated(auth.ReasonMalformed, `the Authorization header must be "Bearer <token>", with an access token or a client secret`)
			s.failed(r, partition, failOther, err)
			return nil, err
		}
		if h == "" || value == "" {
			return nil, nil
		}
		if strings.Count(value, ".") == 2 {
			return authenticator{s}.Authenticate(r, partition)
		}
		if err := s.limits.V1Secret.Allow(s.limits.Clients.Address(r)); err != nil {
			return nil, err
		}
		if err := s.limits.V1Secret.Allow("secret " + auth.HashSecret(value)); err != nil {
			return nil, err
		}
		now := s.now()
		rec, err := auth.CheckSecret(r.Context(), secrets{s}, partition, value, now)
		if err != nil {
			s.failed(r, partition, failSecret, err)
			return nil, err
		}
		acct, err := s.accounts.Account(r.Context(), partition, rec.UserIdentifier, rec.OrganizationIdentifier)
		if err != nil {
			s.failed(r, partition, failSecret, err)
			return nil, err
		}
		return &auth.Principal{UserIdentifier: rec.UserIdentifier, OrganizationIdentifier: rec.OrganizationIdentifier,
			Partition: partition, Roles: acct.Roles, Operator: acct.Operator}, nil
	}
}
