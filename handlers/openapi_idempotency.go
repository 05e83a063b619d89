package handlers

import (
	"net/http"
	"strconv"

	"credo/handlers/idempotency"
)

// idempotencyParamName names the Idempotency-Key parameter among the shared parameters.
const idempotencyParamName = "IdempotencyKey"

// idempotencyParam describes Idempotency-Key (handlers/idempotency).
func idempotencyParam() obj {
	return obj{"name": idempotency.KeyHeader, "in": "header", "required": false,
		"description": "Makes the request safe to retry (IETF draft httpapi-idempotency-key-header): 1 to " +
			strconv.Itoa(idempotency.MaxKeyLength) + " printable ASCII characters, taken as sent, e.g. a UUID. " +
			"The first success answered to the key is kept for 24 hours for the caller (user and organization) " +
			"that sent it; a retry with the same key, method, path and body gets that answer again with `" +
			idempotency.ReplayedHeader + ": true`, and nothing is done twice. A 4xx or 5xx changed nothing and is not kept: " +
			"the key is free again, for a retry or a mended request. The same key with another request is a 422; " +
			"a retry while the first request is still being answered is a 409 with `Retry-After`. If the first request's " +
			"work was done but its server stopped before keeping the answer, the work is not done again: a create's retry " +
			"gets the record it created as it is now (201, or 404 once deleted) if the caller may read the group, " +
			"else a 409 without `Retry-After` whose `Location` names the record; a command's a 409 without `Retry-After`. " +
			"Any other value is a 400.",
		"schema": obj{"type": "string", "minLength": 1, "maxLength": idempotency.MaxKeyLength, "pattern": `^[ -~]+$`}}
}

// replayedHeader describes Idempotent-Replayed.
func replayedHeader() obj {
	return obj{"description": "`true` when the answer is the one kept from the first request with the same `" +
		idempotency.KeyHeader + "`; absent otherwise.",
		"schema": obj{"type": "string", "enum": []string{"true"}}}
}

// markIdempotent describes, on an operation that honours Idempotency-Key, the header, the
// Idempotent-Replayed header of its success answers, and returns the problem statuses it adds.
func markIdempotent(op obj, resp obj) []int {
	params, _ := op["parameters"].([]any)
	op["parameters"] = append(params, obj{"$ref": "#/components/parameters/" + idempotencyParamName})
	for status, v := range resp {
		if n, err := strconv.Atoi(status); err != nil || n >= 300 {
			continue
		}
		r := v.(obj)
		hs, _ := r["headers"].(obj)
		if hs == nil {
			hs = obj{}
			r["headers"] = hs
		}
		hs[idempotency.ReplayedHeader] = obj{"$ref": "#/components/headers/" + idempotency.ReplayedHeader}
	}
	return []int{http.StatusConflict, http.StatusUnprocessableEntity}
}
