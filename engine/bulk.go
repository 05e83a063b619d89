package engine

import (
	"context"
	"encoding/json"
	"fmt"
)

// RowError is one problem of one row of a bulk load, with the row's 0-based index.
type RowError struct {
	Row    int
	Member string
	Msg    string
}

// BulkError lists every problem of a bulk load; nothing was written. It is an ErrInvalid.
type BulkError struct{ Rows []RowError }

func (e *BulkError) Error() string {
	s := fmt.Sprintf("%d problem(s)", len(e.Rows))
	for i, r := range e.Rows {
		if i == 10 {
			s += fmt.Sprintf("; and %d more", len(e.Rows)-10)
			break
		}
		s += fmt.Sprintf("; %s (%d)", r.Msg, r.Row)
	}
	return s
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *BulkError) Is(target error) bool { return target == ErrInvalid }

// DecodeRow reads one CSV row (cells under header names) into a draft: a cell is parsed as its
// member's type; an empty cell is omitted (null, default or zero, as in a body).
func (r *Resource) DecodeRow(header, cells []string) (Draft, error) {
	d := r.NewDraft()
	verr := &ValidationError{}
	for i, name := range header {
		f, ok := r.byName[name]
		if !ok {
			verr.Add(name, fmt.Sprintf("%s is not a member of %s", name, r.Name))
			continue
		}
		if i >= len(cells) || cells[i] == "" || !f.Stored() || f.ReadOnly {
			continue
		}
		v, err := f.ParseText(cells[i])
		if err != nil {
			verr.Add(name, fmt.Sprintf("%s %v", name, err))
			continue
		}
		d.rec[f.Index], d.given[f.Index] = v, true
	}
	if !verr.Empty() {
		return Draft{}, verr
	}
	return d, nil
}

// DecodeArray reads a JSON array of bodies; each element goes through DecodeDraft.
func (r *Resource) DecodeArray(data []byte) ([]Draft, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, Invalid("the file must be a JSON array of %s objects: %v", r.Name, err)
	}
	drafts := make([]Draft, len(raws))
	bulk := &BulkError{}
	for i, raw := range raws {
		d, err := r.DecodeDraft(raw)
		if err != nil {
			bulk.add(i, err)
			continue
		}
		drafts[i] = d
	}
	if len(bulk.Rows) > 0 {
		return nil, bulk
	}
	return drafts, nil
}

func (e *BulkError) add(row int, err error) {
	if v, ok := err.(*ValidationError); ok && len(v.Fields) > 0 {
		for _, m := range v.Members() {
			for _, msg := range v.Fields[m] {
				e.Rows = append(e.Rows, RowError{Row: row, Member: m, Msg: msg})
			}
		}
		return
	}
	e.Rows = append(e.Rows, RowError{Row: row, Msg: err.Error()})
}

// InsertAll checks every record (CheckAll), then inserts them all in one transaction, in
// batches. Any problem or failed insert writes nothing; problems carry the row index.
func (s *Store) InsertAll(ctx context.Context, r *Resource, drafts []Draft, scope Scope) error {
	return s.InsertAllProgress(ctx, r, drafts, scope, nil)
}

// InsertAllProgress is InsertAll that calls progress, when not nil, with the number of records
// written after each batch. The write check that ctx carries for r (WithWriteCheck) runs on
// every record before anything is written; its refusal is returned as it is.
func (s *Store) InsertAllProgress(ctx context.Context, r *Resource, drafts []Draft, scope Scope, progress func(written int)) error {
	bulk, err := s.CheckAll(ctx, r, drafts, scope)
	if err != nil {
		return fmt.Errorf("engine: load %s: %w", r.Name, err)
	}
	if bulk != nil {
		return fmt.Errorf("engine: load %s: %w", r.Name, bulk)
	}
	recs, _ := records(r, drafts) // CheckAll has checked every draft
	if check := writeCheck(ctx, r); check != nil {
		for i, rec := range recs {
			if rec == nil {
				continue
			}
			if err := check(ctx, s, r, nil, rec); err != nil {
				return fmt.Errorf("engine: load %s: row %d: %w", r.Name, i, err)
			}
		}
	}
	rows := make([]map[string]any, 0, len(recs))
	for _, rec := range recs {
		if rec != nil {
			rows = append(rows, columnsOf(r, rec))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	// PostgreSQL takes at most 65535 bind values in a statement; SQLite at most 32766, and its
	// driver binds in time quadratic in their number, so its batches stay small.
	batch := max(1, 60000/len(r.Fields))
	if s.dialect == SQLite {
		batch = max(1, 2000/len(r.Fields))
	}
	err = s.Transaction(ctx, func(tx *Store) error {
		for start := 0; start < len(rows); start += batch {
			end := min(start+batch, len(rows))
			res := tx.db.Table(tx.TableName(r)).Clauses(onKeyConflict(r)).Create(rows[start:end])
			if res.Error != nil {
				return translate(r, res.Error)
			}
			if res.RowsAffected < int64(end-start) {
				return conflict(r, r.Key) // a stored record has the key of one of these
			}
			if progress != nil {
				progress(end)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("engine: load %s: %w", r.Name, err)
	}
	return nil
}
