package auth

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// EncryptionKeyBytes is the size of a cookie encryption key (AES-256).
const EncryptionKeyBytes = 32

// MaxCookieBytes bounds a cookie token: browsers keep cookies of at most 4096 bytes, so Encode
// refuses to make a longer one and Decode refuses to read it.
const MaxCookieBytes = 4096

// Versions of the cookie wire format (the first byte).
const (
	cookieSigned    byte = 1
	cookieEncrypted byte = 2
)

// cookieMACContext separates the cookie MAC key from the token key when both come from the same
// signing key, so that no cookie MAC is ever a valid token signature or the other way round.
const cookieMACContext = "credo cookie mac v1"

// CookiePayload is the content of a session cookie (decisions §7). Its JSON member names are
// those below, in PascalCase like the rest of the API.
type CookiePayload struct {
	// Identifier names the cookie for revocation, like a token's jti (a UUIDv7).
	Identifier   string    `json:"Identifier"`
	User         string    `json:"User"`
	Email        string    `json:"Email"`
	Organization string    `json:"Organization"`
	Partition    string    `json:"Partition"`
	Roles        []string  `json:"Roles"`
	Created      time.Time `json:"Created"`
	Expiry       time.Time `json:"Expiry"`
	// Secret, Token and Parent are the cookie's lineage: the client secret behind it, the
	// access token it was first made from, and the cookie it was made from (empty when made
	// from a token). Revoking any of them ends this cookie (decisions §7).
	Secret string `json:"Secret,omitempty"`
	Token  string `json:"Token,omitempty"`
	Parent string `json:"Parent,omitempty"`
}

// Lineage returns the identifiers whose revocation ends the cookie besides its own.
func (p *CookiePayload) Lineage() []string { return lineage(p.Secret, p.Token, p.Parent) }

// lineage keeps the non-empty identifiers.
func lineage(ids ...string) []string {
	var out []string
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

// Cookies encodes and decodes session cookie tokens.
//
// Wire format: the token is unpadded base64url of one version byte and a body.
//
//	version 1 (signed):    1 ‖ J ‖ HMAC-SHA256(M, 1 ‖ J)
//	version 2 (encrypted): 2 ‖ nonce(12) ‖ AES-256-GCM(E, nonce, J ‖ HMAC-SHA256(M, 2 ‖ J), aad = 2)
//
// where J is the payload's JSON, E the encryption key and M = HMAC-SHA256(signing key,
// "credo cookie mac v1"). The MAC is checked in both versions, so a cookie is authentic whether
// or not encryption is configured; encryption only hides the payload from the browser. The
// nonce is random per cookie. A Cookies is safe for concurrent use.
type Cookies struct {
	mac   []byte
	aead  cipher.AEAD // nil when cookies are only signed
	clock func() time.Time
}

// NewCookies returns a codec signing with signingKey (at least MinKeyBytes bytes) and, when
// encryptionKey is not empty, encrypting with it (exactly EncryptionKeyBytes bytes). clock is
// time.Now when nil.
func NewCookies(signingKey, encryptionKey []byte, clock func() time.Time) (*Cookies, error) {
	if len(signingKey) < MinKeyBytes {
		return nil, fmt.Errorf("auth: cookie signing key has %d bytes; at least %d are needed", len(signingKey), MinKeyBytes)
	}
	m := hmac.New(sha256.New, signingKey)
	m.Write([]byte(cookieMACContext))
	c := &Cookies{mac: m.Sum(nil), clock: clock}
	if c.clock == nil {
		c.clock = time.Now
	}
	if len(encryptionKey) > 0 {
		if len(encryptionKey) != EncryptionKeyBytes {
			return nil, fmt.Errorf("auth: cookie encryption key has %d bytes; it needs %d", len(encryptionKey), EncryptionKeyBytes)
		}
		block, err := aes.NewCipher(encryptionKey)
		if err != nil {
			return nil, fmt.Errorf("auth: cookie encryption key: %w", err)
		}
		if c.aead, err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("auth: cookie encryption key: %w", err)
		}
	}
	return c, nil
}

// Encode signs (and, when configured, encrypts) a payload and returns the cookie token with the
// payload as encoded. Expiry is required; Created defaults to the clock's time and Identifier to
// a new UUIDv7.
func (c *Cookies) Encode(p CookiePayload) (string, CookiePayload, error) {
	if p.Expiry.IsZero() {
		return "", CookiePayload{}, errors.New("auth: encode cookie: expiry is required")
	}
	if p.Created.IsZero() {
		p.Created = c.clock()
	}
	if p.Identifier == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return "", CookiePayload{}, fmt.Errorf("auth: encode cookie: %w", err)
		}
		p.Identifier = id.String()
	}
	p.Roles = append([]string{}, p.Roles...)
	j, err := json.Marshal(p)
	if err != nil {
		return "", CookiePayload{}, fmt.Errorf("auth: encode cookie: %w", err)
	}
	version := cookieSigned
	if c.aead != nil {
		version = cookieEncrypted
	}
	signed := append(j, c.sign(version, j)...)
	out := []byte{version}
	if c.aead == nil {
		out = append(out, signed...)
	} else {
		nonce := make([]byte, c.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return "", CookiePayload{}, fmt.Errorf("auth: encode cookie: %w", err)
		}
		out = append(out, nonce...)
		out = c.aead.Seal(out, nonce, signed, []byte{version})
	}
	s := base64.RawURLEncoding.EncodeToString(out)
	if len(s) > MaxCookieBytes {
		return "", CookiePayload{}, fmt.Errorf("auth: encode cookie: %d bytes is more than %d", len(s), MaxCookieBytes)
	}
	return s, p, nil
}

// Decode returns the payload of a genuine cookie token read in a partition, expired or not and
// of whichever partition it names. An encrypted cookie is read only when decrypt is set;
// otherwise the error wraps ErrMalformed (the request asked for the impossible). Every other
// refusal (not a cookie token, undecryptable, bad signature) wraps ErrUnauthenticated with the
// reason as its message; a bad signature on a cookie that says it is of another partition is
// said to be one (see partitionRefusal).
func (c *Cookies) Decode(token, partition string, decrypt bool) (*CookiePayload, error) {
	if len(token) > MaxCookieBytes {
		return nil, unauthenticated(ReasonMalformed, "malformed cookie: longer than %d bytes", MaxCookieBytes)
	}
	raw, err := DecodeToken(token)
	if err != nil || len(raw) < 1+sha256.Size {
		return nil, unauthenticated(ReasonMalformed, "malformed cookie")
	}
	version, body := raw[0], raw[1:]
	switch version {
	case cookieSigned:
	case cookieEncrypted:
		if !decrypt {
			return nil, malformed("the cookie is encrypted; ask to decrypt it")
		}
		if c.aead == nil {
			return nil, unauthenticated(ReasonSignature, "the cookie is encrypted and no decryption key is configured")
		}
		n := c.aead.NonceSize()
		if len(body) < n {
			return nil, unauthenticated(ReasonMalformed, "malformed cookie")
		}
		if body, err = c.aead.Open(nil, body[:n], body[n:], []byte{version}); err != nil {
			return nil, unauthenticated(ReasonSignature, "the cookie cannot be decrypted")
		}
	default:
		return nil, unauthenticated(ReasonMalformed, "malformed cookie: unknown version %d", version)
	}
	if len(body) < sha256.Size {
		return nil, unauthenticated(ReasonMalformed, "malformed cookie")
	}
	j, tag := body[:len(body)-sha256.Size], body[len(body)-sha256.Size:]
	if !hmac.Equal(tag, c.sign(version, j)) {
		return nil, partitionRefusal(j, partition)
	}
	var p CookiePayload
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		// Signed by us yet unreadable: a cookie of an incompatible release.
		return nil, unauthenticated(ReasonMalformed, "malformed cookie: %v", err)
	}
	return &p, nil
}

// Validate decodes (and decrypts) a cookie token for use in a partition, checks that it is of
// that partition, and checks its expiry at the clock's time: a cookie is expired from its
// Expiry instant on. Refusals wrap ErrUnauthenticated: "cookie of another partition (…)" among
// them, and a bad signature on a cookie that says it is of another partition says so.
func (c *Cookies) Validate(token, partition string) (*CookiePayload, error) {
	p, err := c.Decode(token, partition, true)
	if err != nil {
		return nil, err
	}
	if p.Partition != partition {
		return nil, unauthenticated(ReasonPartition, "cookie of another partition (%s)", p.Partition)
	}
	if !c.clock().Before(p.Expiry) {
		return nil, unauthenticated(ReasonExpired, "cookie expired on %s", formatTime(p.Expiry))
	}
	return p, nil
}

// partitionRefusal is the refusal of a cookie whose signature fails in a partition. j is the
// payload as the cookie states it, unverified: each partition signs with its own key, so a
// cookie of another partition fails there by its signature, and one that names another
// partition is said to be one, without repeating the name it gives (as Tokens.refusal does).
func partitionRefusal(j []byte, partition string) error {
	var claimed struct{ Partition string }
	if json.Unmarshal(j, &claimed) == nil && claimed.Partition != "" && claimed.Partition != partition {
		return unauthenticated(ReasonSignature,
			"the cookie signature is invalid in partition %s: the cookie says it is of another partition, and each partition signs with its own key", partition)
	}
	return unauthenticated(ReasonSignature, "the cookie signature is invalid")
}

func (c *Cookies) sign(version byte, j []byte) []byte {
	m := hmac.New(sha256.New, c.mac)
	m.Write([]byte{version})
	m.Write(j)
	return m.Sum(nil)
}
