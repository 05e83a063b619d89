package handlers

// apiDescription is the document's introduction (Markdown): the conventions every operation
// shares, which the operations do not repeat.
const apiDescription = `credo books exam events and registers learners on them (version 1, under ` + "`/api`" + `),
and serves the platform's records, tokens, cookies, a compliance plugin and platform utilities
(version 2, under ` + "`/v2/{partition}`" + `). This document is generated from the record-group
descriptors and the modules' route descriptions; the test suites check every request and answer
they exchange against it.

## Conventions

- **Authentication.** Send ` + "`Authorization: Bearer <ACCESS_TOKEN>`" + `, with a token from
  ` + "`security/tokens/generate`" + `, or the session cookie from ` + "`security/cookies/generate`" + `.
  Version-1 routes also take a client secret as the bearer credential. No credential, or one
  that is not valid, is a 401 with ` + "`WWW-Authenticate`" + `; a valid one without the permission
  the operation needs is a 403.
- **Errors** are RFC 9457 problem documents (` + "`application/problem+json`" + `) with PascalCase
  members; ` + "`Errors`" + ` names each parameter or member that is wrong.
- **Methods.** A path answers the methods it does not offer with 405 and ` + "`Allow`" + ` listing the
  ones it does (possibly none). An unknown path is a 404.
- **Bodies** are JSON: send ` + "`Content-Type: application/json`" + ` (a body without a Content-Type is
  read as JSON). Another type is a 415 where the operation says so; a body over the operation's
  limit is a 413. Unknown members, members of the wrong JSON type and a member given twice are a
  400 naming the member.
- **Datetimes** are ISO 8601 with an offset (` + "`Z`" + ` or ` + "`±HH:mm`" + `) and up to 7 fraction
  digits; they come back with the offset they were sent with.
- **Lists.** List and search take ` + "`Page`" + `, ` + "`Take`" + `, ` + "`Sort`" + `, ` + "`Includes`" + `,
  ` + "`Excludes`" + ` and ` + "`Format`" + `; each also answers to its ` + "`Filter.`" + ` alias
  (` + "`Filter.Page`" + ` …), which count accepts and ignores. ` + "`Origin.*`" + ` parameters are checked and
  logged, never filters. A query parameter given twice, unknown, or of the wrong type is a 400.
  The answer carries ` + "`X-Query-Pagination`" + `; when another page follows, its ` + "`Continuation`" + `
  token, sent back as ` + "`Continue`" + ` with the same query, reads the next page by position (a deep
  page costs what the first costs, and concurrent writes neither repeat nor skip records).
- **Request ids.** Every answer carries ` + "`X-Request-Id`" + `: the id sent in that header (1 to 128
  printable ASCII characters without spaces), or one credo made. Problem documents repeat it as
  ` + "`RequestId`" + `; quote it when reporting a problem.
- **Retries.** Creates (` + "`POST`" + ` on a record group) and the version-1 registration commands take
  an ` + "`Idempotency-Key`" + ` header (IETF draft httpapi-idempotency-key-header): the first answer to a
  key (not a 5xx) is kept for 24 hours for the caller that sent it, and a retry with the same
  key, method, path and body gets it again with ` + "`Idempotent-Replayed: true`" + ` without the work
  being done twice, on any server. The key with another request is a 422; a retry while the first
  request is still being answered is a 409 with ` + "`Retry-After`" + `. The work and the key's use commit
  together: if a server stopped after the work and before keeping its answer, the retry (after two
  minutes) is not done again: a create's gets the record it created as it is now (201, marked
  replayed; a 404 once it is deleted) if the caller may read the group, else a 409 without
  ` + "`Retry-After`" + ` whose ` + "`Location`" + ` names the record; a command's a 409 without
  ` + "`Retry-After`" + ` saying so. The people import refuses the header (a 400 naming it): it
  needs none, as its description says.
- **Conditional requests.** A record's get, exists (` + "`HEAD`" + `), create, ` + "`PUT`" + ` and ` + "`PATCH`" + `
  answer its ` + "`ETag`" + ` (a strong validator of the whole record). ` + "`If-None-Match`" + ` on get and
  exists answers 304 with no body while the record is unchanged; ` + "`If-Match`" + ` on ` + "`PUT`" + `,
  ` + "`PATCH`" + ` and ` + "`DELETE`" + ` writes only the version read, and is a 412 when the record changed
  since (re-read it and retry); ` + "`If-None-Match`" + ` on those writes (` + "`*`" + `, or the record's ETag) is a 412
  and writes nothing, so that a write never replaces a record the client did not expect to
  exist. Writes without either stay unconditional. List and search
  items carry no ETag; get the record for one.
- **Unavailable database.** An operation that needs the partition's database answers 503 with
  ` + "`Retry-After`" + ` when the database cannot be reached, does not answer in time, refuses
  connections, has no space left for a write (nothing of it is written), or another transaction held a
  lock the request needed for too long, and when the partition's tables must be migrated again;
  ` + "`Detail`" + ` says which. Retrying later may succeed.
- **Browsers.** When the server allows browser origins (` + "`--cors-origins`" + `), a CORS preflight
  (` + "`OPTIONS`" + ` with ` + "`Origin`" + ` and ` + "`Access-Control-Request-Method`" + `) to any path is answered 204
  with no body before routing: with ` + "`Access-Control-Allow-*`" + ` headers for an allowed origin,
  without them for another. Preflights are not listed as operations. Without allowed origins an
  ` + "`OPTIONS`" + ` is a 405 like any other method a path does not offer.
- **Outside this document.** The probes ` + "`GET /livez`" + ` and ` + "`GET /readyz`" + ` (for process
  supervisors and load balancers) and the admin listener (` + "`/metrics`" + `, ` + "`/debug/pprof/`" + `) are
  operational endpoints, not API operations; the server's operations guide describes them.
- **Accept.** JSON (` + "`application/json`" + `, ` + "`*/*`" + ` or none) everywhere, CSV (` + "`text/csv`" + `)
  for list and search; another type is a 406 where the operation says so.
`
