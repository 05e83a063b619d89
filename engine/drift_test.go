package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"credo/engine"
)

// TestUndefinedColumnIsNotMigratedOnlyWhenItIs: a statement naming a column that does not exist
// is ErrNotMigrated only when the partition's tables do lack a column its descriptors need, as
// Ready finds (its error then names the columns missing, and its reason the partition): with
// the tables intact, a statement naming a column of no descriptor is a wrong statement, an
// unknown error (a 500 to fix), not a partition for the operator to migrate. A verb, a
// module's statement and a transaction all say the same.
func TestUndefinedColumnIsNotMigratedOnlyWhenItIs(t *testing.T) {
	reg := fixtureRegistry(t)
	w := reg.MustByName("Widget")
	code, _ := w.Member("WidgetCode")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		id := mustCreate(t, s, w, widget("N1", "")).Get(w, "WidgetIdentifier")
		wrong := func() error {
			var n int64
			return s.Translate(s.DB(ctx).Table(s.TableName(w)).Where("no_such_column = ?", 1).Count(&n).Error)
		}
		if err := wrong(); err == nil || errors.Is(err, engine.ErrNotMigrated) || errors.Is(err, engine.ErrUnavailable) {
			t.Fatalf("a statement naming a column of no descriptor, the tables intact: %v, want an unknown error", err)
		}

		if err := s.DB(ctx).Exec("ALTER TABLE " + s.Table(w) + " RENAME COLUMN " + code.Column + " TO " + code.Column + "_old").Error; err != nil {
			t.Fatal(err)
		}
		ops := map[string]func() error{
			"get": func() error { _, err := s.Get(ctx, w, []any{id}, nil, engine.AllOrganizations()); return err },
			"list": func() error {
				_, _, err := s.List(ctx, w, engine.Query{Page: 1, Take: 20, Sort: w.DefaultSort, Fields: w.Output}, engine.AllOrganizations())
				return err
			},
			"transaction": func() error {
				return s.Transaction(ctx, func(tx *engine.Store) error {
					_, err := tx.Get(ctx, w, []any{id}, nil, engine.AllOrganizations())
					return err
				})
			},
			"module": wrong,
		}
		for name, op := range ops {
			err := op()
			if !errors.Is(err, engine.ErrNotMigrated) || errors.Is(err, engine.ErrUnavailable) {
				t.Errorf("%s with WidgetCode's column renamed: %v, want ErrNotMigrated", name, err)
				continue
			}
			if reason := engine.Reason(err); !strings.Contains(reason, "partition "+s.Partition) {
				t.Errorf("%s: the reason %q does not name the partition", name, reason)
			}
			if !strings.Contains(err.Error(), "missing: widgets."+code.Column) {
				t.Errorf("%s: %v does not name the column missing", name, err)
			}
		}
	})
}
