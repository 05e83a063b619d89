package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestMigrationAllowsMissingValuesInANewUniqueConstraint: a unique index holds any number of
// rows whose value is missing (NULL): neither store compares NULLs. A release that adds a
// member that is not a string and makes it unique adds its column, NULL in every stored
// record, then creates the index: the check for values that the index refuses does not take
// those NULLs for one value held twice (it refused the start-up).
func TestMigrationAllowsMissingValuesInANewUniqueConstraint(t *testing.T) {
	reg := fixtureRegistry(t)
	unique := uniqueBadgeRegistry(t)
	ctx := context.Background()
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			p := testenv.Partition(t)
			db, err := engine.Open(ctx, b.URL, []string{p}, reg)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := db.Store(p)
			users := reg.MustByName("User")
			mustCreate(t, s, users, `{"Email":"ann@example.com"}`)
			mustCreate(t, s, users, `{"Email":"bob@example.com"}`)
			db.Close()

			db, err = engine.Open(ctx, b.URL, []string{p}, unique)
			if err != nil {
				t.Fatalf("start-up adding a unique Badge to two users: %v", err)
			}
			defer db.Close()
			if after := schemaOf(t, b, p); !slices.Contains(after, "index ux_users_badge") {
				t.Errorf("after the migration the partition lacks ux_users_badge: %v", after)
			}
		})
	}
}

// uniqueBadgeRegistry is the built-in descriptors with a new users' member, Badge (a nullable
// int: a non-nullable one would be 0 in every record that omits it, which Load refuses in a
// unique constraint), unique.
func uniqueBadgeRegistry(t *testing.T) *engine.Registry {
	t.Helper()
	return editedUsersRegistry(t, func(data string) string {
		const u, f = "  - {fields: [Email], fold: ascii}\n", "  - {name: TimeZone, type: string}\n"
		text := strings.Replace(data, u, u+"  - [Badge]\n", 1)
		text = strings.Replace(text, f, f+"  - {name: Badge, type: int, nullable: true}\n", 1)
		if strings.Count(text, "Badge") != 2 {
			return ""
		}
		return text
	})
}
