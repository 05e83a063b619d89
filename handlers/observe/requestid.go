package observe

import (
	"encoding/hex"
	"math/rand/v2"
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

// MaxRequestIDLen is the longest request id accepted from a client; a longer one is replaced.
const MaxRequestIDLen = 128

// validID reports whether a client's request id may be kept: 1 to MaxRequestIDLen printable
// ASCII characters without spaces, so that it cannot forge or break a log line.
func validID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// newID returns 128 random bits in hex. Request ids only need to be unique, not secret, so
// the runtime's fast generator serves.
func newID() string {
	var b [16]byte
	for i, v := range [2]uint64{rand.Uint64(), rand.Uint64()} {
		for j := range 8 {
			b[i*8+j] = byte(v >> (8 * j))
		}
	}
	return hex.EncodeToString(b[:])
}
