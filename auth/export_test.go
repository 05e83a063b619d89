package auth

// Encrypts reports whether Encode encrypts cookies.
func (c *Cookies) Encrypts() bool { return c.aead != nil }
