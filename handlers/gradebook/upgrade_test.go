package gradebook_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"credo/engine"
	"credo/internal/testenv"
)

// TestExportsAfterUpgrade: an installation upgraded from the version that wrote exports to a
// folder keeps the gradebook_exports table's file_name column (migrations only add) and may
// hold exports recorded then, whose files are not in the database. Exports work beside the
// column; such an old export answers 404 and its record is removed; and the column can be
// dropped (docs/deploy.md) without a process noticing.
func TestExportsAfterUpgrade(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		reg, _ := registry()
		files := reg.MustByName("GradebookExportFile")
		table := e.st.Table(files)
		if err := e.st.DB(ctx).Exec("ALTER TABLE " + table + ` ADD COLUMN "file_name" varchar(64)`).Error; err != nil {
			t.Fatal(err)
		}
		old := gid(50)
		body := `{"ExportKey":"` + old + `","PartitionSlug":"` + e.st.Partition + `","ExportFormat":"csv","OwnerUserIdentifier":"` + userA +
			`","OrganizationIdentifier":"` + orgA + `","Expiry":"` + e.clock.Now().Add(time.Hour).Format(time.RFC3339) + `"}`
		if _, err := testenv.CreateJSON(ctx, e.st, files, []byte(body), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if err := e.st.DB(ctx).Exec("UPDATE "+table+` SET "file_name" = ? WHERE "export_key" = ?`, old+".csv", old).Error; err != nil {
			t.Fatal(err)
		}

		upgraded := e.replica(t) // a process started on the upgraded schema migrates over it
		seed(t, e)
		x := upgraded.export(t, callerA, "Format=csv")
		if got, want := e.download(t, callerA, x), upgraded.download(t, callerA, x); got != want || got == "" {
			t.Errorf("downloads beside the old column differ: %q and %q", got, want)
		}
		rec := upgraded.do(t, callerA, http.MethodGet, "/v2/"+e.st.Partition+"/progress/gradebooks/download/"+old, nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("an export recorded before the upgrade: %d %s, want 404", rec.Code, rec.Body)
		}
		if recorded, _ := e.stored(t, old); recorded {
			t.Error("the old export's record was kept after its download found no file")
		}

		if err := e.st.DB(ctx).Exec("ALTER TABLE " + table + ` DROP COLUMN "file_name"`).Error; err != nil {
			t.Fatal(err)
		}
		after := e.replica(t)
		y := after.export(t, callerA, "")
		if e.download(t, callerA, y) == "" {
			t.Error("an export after the column was dropped is empty")
		}
		if e.st.Dialect() == engine.Postgres {
			var n int
			if err := e.st.DB(ctx).Raw("SELECT count(*) FROM information_schema.columns WHERE table_schema = ? AND column_name = 'file_name'", e.st.Partition).Scan(&n).Error; err != nil || n != 0 {
				t.Errorf("file_name came back: %d %v", n, err)
			}
		}
	})
}
