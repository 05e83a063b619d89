// Package idempotency makes the retry of a create or a command safe (IETF draft
// httpapi-idempotency-key-header): the first answer to a request carrying an Idempotency-Key is
// kept in the partition's database, and a retry with the same key gets it again, once, from
// any process sharing that database.
package idempotency
