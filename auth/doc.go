// Package auth issues and verifies client secrets, JWT access tokens and cookies, authenticates
// requests and decides what an authenticated caller may do.
package auth
