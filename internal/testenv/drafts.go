package testenv

import (
	"context"

	"credo/engine"
)

// CreateJSON creates a record of r from a JSON body, as the v2 create does: the body is
// decoded into a draft (a body that is not a JSON object is returned as it is; the problems
// of its members are the create's) and created within scope.
func CreateJSON(ctx context.Context, s *engine.Store, r *engine.Resource, body []byte, scope engine.Scope) (engine.Record, error) {
	d, err := r.DecodeDraft(body)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, r, d, scope)
}

// UpdateJSON replaces the record with key by a JSON body, as the v2 update does: the problems
// of its members are the update's (a 404 when the record is missing).
func UpdateJSON(ctx context.Context, s *engine.Store, r *engine.Resource, key []any, body []byte, scope engine.Scope) error {
	d, err := r.DecodeDraft(body)
	if err != nil {
		return err
	}
	return s.Update(ctx, r, key, d, scope)
}

// PatchJSON applies a JSON merge patch to the record with key, as the v2 patch does (see
// UpdateJSON).
func PatchJSON(ctx context.Context, s *engine.Store, r *engine.Resource, key []any, body []byte, scope engine.Scope) error {
	d, err := r.DecodeDraft(body)
	if err != nil {
		return err
	}
	return s.Patch(ctx, r, key, d, scope)
}
