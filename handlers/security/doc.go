// Package security serves the v2 security operations and backs authentication and authorization with the partition's records.
//
// Choices where the specification is silent (also in docs/security.md):
//   - Each partition signs with its own key: a random 32-byte key stored in its signing_keys
//     table on first use, or, when CREDO_SIGNING_KEY is set, HMAC-SHA256(that key, partition
//     slug). A token or cookie of one partition therefore never verifies in another.
//   - A caller's roles and permission groups are the groups of all of its current memberships
//     (MembershipEffective at or before now, MembershipExpiry the zero value or after now).
//   - Operator is the IsOperator flag of the caller's person in the organization it acts in.
//     An operator who acts for another organization (tokens/generate Organization) stays an
//     operator there even without a person in it.
//   - Agent and Subject both name the user a token is issued for (its sub); the token then
//     has that user's rights, not the operator's. Its organization is Organization when given,
//     else the secret's organization when the user has a person there, else the user's only
//     organization.
//   - Every bearer token and session cookie issued is registered by identifier, so that
//     DELETE security/tokens/{jti} lets a caller revoke its own tokens and cookies (operators
//     any identifier); another caller's identifier is a 404. Revoking a client secret also
//     revokes the live tokens generated with it.
//   - A session cookie expires with the credential that asked for it, and at most after
//     CookieLifetime.
package security
