package security

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
	"credo/handlers/limit"
)

// DefaultAudience and DefaultIssuer are the aud and iss claims when Config names none.
const (
	DefaultAudience = "credo"
	DefaultIssuer   = "credo"
)

// Config is what New needs from the process.
type Config struct {
	// SigningKey is CREDO_SIGNING_KEY: at least auth.MinKeyBytes bytes, from which each
	// partition's key is derived with DeriveKey. Nil means each partition's random key, stored
	// in its database on first use.
	SigningKey []byte
	// CookieEncryptionKey, when set, is the auth.EncryptionKeyBytes-byte AES-256 key with which
	// session cookies are encrypted (AES-GCM); without it cookies are only signed.
	CookieEncryptionKey []byte
	// Now is the clock of tokens, cookies, secrets and caches; nil means time.Now.
	Now func() time.Time
	// Audience and Issuer are the aud and iss claims issued and required; DefaultAudience and
	// DefaultIssuer when empty.
	Audience, Issuer string
	// Limits bound tokens/generate, cookies/generate and version-1 secret authentication
	// per client address and per secret; nil means limit.Defaults on the Now clock (the
	// limits are on unless configured off).
	Limits *limit.Set
}

// Security backs the router's authentication and authorization with the partitions' records
// and serves the security operations. Build it with New; it is safe for concurrent use.
type Security struct {
	db          *engine.Database
	now         func() time.Time
	partitions  map[string]*partitionAuth
	revocations *auth.RevocationCache
	accounts    *accounts
	// owners caches the owner of each client secret, for checkActing.
	owners     secretOwners
	authorizer *auth.Authorizer
	limits     *limit.Set
	// rec are the descriptors the package uses, resolved once by New.
	rec *records
	// groupPaths maps each record group's path to its record name (security/settings/resources).
	groupPaths map[string]string
	// objectPaths maps each record group's permission object to its path, for refusals.
	objectPaths map[uuid.UUID]string
}

// partitionAuth is what verifies and issues one partition's credentials.
type partitionAuth struct {
	tokens  *auth.Tokens
	cookies *auth.Cookies
	authn   *auth.Authenticator
	// continuation signs the partition's list continuation tokens (see ContinuationKey).
	continuation []byte
}

// New prepares every partition of db: it reads each partition's signing key, creating it when
// the partition has none yet (or derives it from cfg.SigningKey), and builds the verifiers,
// the revocation cache and the permission cache over the partitions' records.
func New(ctx context.Context, db *engine.Database, cfg Config) (*Security, error) {
	if db == nil {
		return nil, errors.New("security: no database")
	}
	if cfg.SigningKey != nil && len(cfg.SigningKey) < auth.MinKeyBytes {
		return nil, fmt.Errorf("security: the signing key has %d bytes; at least %d are needed", len(cfg.SigningKey), auth.MinKeyBytes)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Audience == "" {
		cfg.Audience = DefaultAudience
	}
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if cfg.Limits == nil {
		var err error
		if cfg.Limits, err = limit.NewSet("", "", cfg.Now); err != nil {
			return nil, err
		}
	}
	s := &Security{db: db, now: cfg.Now, partitions: map[string]*partitionAuth{}, limits: cfg.Limits}
	s.revocations = auth.NewRevocationCache(revocations{s}, auth.MaxRevocationTTL, cfg.Now)
	s.accounts = &accounts{s: s, entries: map[accountKey]accountEntry{}}
	s.authorizer = &auth.Authorizer{Grants: grants{s}, Clock: cfg.Now}
	for _, p := range db.Partitions() {
		st, ok := db.Store(p)
		if !ok {
			return nil, fmt.Errorf("security: partition %s has no store", p)
		}
		if s.rec == nil { // every partition's store serves the registry db was opened with
			if err := s.resolve(st.Registry()); err != nil {
				return nil, err
			}
		}
		key := cfg.SigningKey
		if key != nil {
			key = DeriveKey(key, p)
		} else {
			var err error
			if key, err = s.rec.storedKey(ctx, st, cfg.Now()); err != nil {
				return nil, err
			}
		}
		tokens, err := auth.NewTokens(key, cfg.Now, cfg.Audience, cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("security: partition %s: %w", p, err)
		}
		cookies, err := auth.NewCookies(key, cfg.CookieEncryptionKey, cfg.Now)
		if err != nil {
			return nil, fmt.Errorf("security: partition %s: %w", p, err)
		}
		s.partitions[p] = &partitionAuth{tokens: tokens, cookies: cookies, authn: &auth.Authenticator{
			Tokens: tokens, Cookies: cookies, Revocations: s.revocations, Accounts: s.accounts,
		}, continuation: DeriveKey(key, continuationContext)}
	}
	return s, nil
}

// resolve resolves, once, the descriptors the package uses and the record group paths.
func (s *Security) resolve(reg *engine.Registry) error {
	rec, err := resolveRecords(reg)
	if err != nil {
		return err
	}
	s.rec, s.groupPaths, s.objectPaths = rec, map[string]string{}, map[uuid.UUID]string{}
	for _, r := range reg.Resources() {
		if r.Path != "" {
			s.groupPaths[r.Path] = r.Name
			s.objectPaths[auth.ObjectID(r.Path)] = r.Path
		}
	}
	return nil
}

// DeriveKey returns a partition's signing key derived from a configured key:
// HMAC-SHA256(key, partition). Partitions thus never share a key, and tests can forge a
// partition's tokens from the configured key.
func DeriveKey(key []byte, partition string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(partition))
	return m.Sum(nil)
}

// continuationContext separates the continuation key from the token and cookie keys derived
// from the same partition key, so that no continuation MAC is a valid token or cookie MAC.
const continuationContext = "credo continuation v1"

// ContinuationKey returns the key that signs a partition's list continuation tokens:
// HMAC-SHA256(partition signing key, "credo continuation v1"). Every process of the partition
// derives the same key, so that a token continues on any replica. Nil for a partition that is
// not configured (the router answers 404 before any list runs).
func (s *Security) ContinuationKey(partition string) []byte {
	if pa, ok := s.partitions[partition]; ok {
		return pa.continuation
	}
	return nil
}

var _ handlers.ContinuationKeys = (*Security)(nil)

// Authenticator returns the router's authenticator: bearer token, then session cookie, each
// checked with the partition's key, against revocations and against the account's current
// person and memberships.
func (s *Security) Authenticator() handlers.Authenticator { return authenticator{s} }

// Authorizer returns the router's authorizer over Permission records (decisions §7), caching
// each decision for at most auth.MaxDecisionTTL.
func (s *Security) Authorizer() handlers.Authorizer {
	return authorizer{PathAuthorizer: auth.PathAuthorizer{Authorizer: s.authorizer}, s: s}
}

type authenticator struct{ s *Security }

var _ handlers.Authenticator = authenticator{}

func (a authenticator) Authenticate(r *http.Request, partition string) (*auth.Principal, error) {
	pa, err := a.s.partition(partition)
	if err != nil {
		return nil, err
	}
	p, err := pa.authn.Authenticate(r, partition)
	if err == nil {
		err = a.s.checkActing(r.Context(), partition, p.Secret, p.UserIdentifier)
	}
	if err != nil {
		p = nil
		a.s.failed(r, partition, credentialOf(r, partition), err)
	}
	return p, err
}

// partition returns a configured partition's verifiers.
func (s *Security) partition(slug string) (*partitionAuth, error) {
	pa, ok := s.partitions[slug]
	if !ok {
		return nil, unauthenticated(auth.ReasonPartition, "the partition %s is not configured", engine.Quoted(slug))
	}
	return pa, nil
}

// store returns a configured partition's store.
func (s *Security) store(partition string) (*engine.Store, error) {
	st, ok := s.db.Store(partition)
	if !ok {
		return nil, fmt.Errorf("security: partition %q is not configured", partition)
	}
	return st, nil
}
