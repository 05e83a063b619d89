package gradebook

import (
	"fmt"
	"net/http"
	"time"

	"credo/engine"
	"credo/handlers/route"
)

// The routes, relative to /v2/{partition}/, and the permission object both use.
const (
	Object       = "progress/gradebooks"
	ExportPath   = Object + "/export"
	DownloadPath = Object + "/download/{key}"
)

// Lifetime is how long an export can at least be downloaded; Expiry is rounded up from
// now + Lifetime to the next multiple of Rounding.
const (
	Lifetime = 15 * time.Minute
	Rounding = 15 * time.Minute
)

// The descriptors this package serves and records exports in.
const (
	gradebookName = "Gradebook"
	fileName      = "GradebookExportFile"
)

// Config is what the export and download operations need from the process.
type Config struct {
	// Dir is the folder that export files go to, one subfolder per partition. Processes that
	// share the database must share this folder for any of them to serve any export.
	Dir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (c Config) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// Routes returns the export and download routes. It panics when cfg.Dir is empty: the
// process cannot serve exports without a folder to write them to.
func Routes(cfg Config) []route.Route {
	if cfg.Dir == "" {
		panic("gradebook: Config.Dir is empty")
	}
	h := &handler{cfg: cfg}
	return []route.Route{
		{
			Method:  http.MethodGet,
			Path:    ExportPath,
			Summary: "Export the gradebooks matching the list filters to a JSON or CSV file and answer where to download it.",
			Access:  route.Protected,
			Object:  Object,
			Need:    "Read",
			Handler: h.export,
		},
		{
			Method:  http.MethodGet,
			Path:    DownloadPath,
			Summary: "Download a gradebook export file until its Expiry.",
			Access:  route.Protected,
			Object:  Object,
			Need:    "Read",
			Handler: h.download,
		},
	}
}

// handler serves both routes with one configuration.
type handler struct {
	cfg Config
}

// resources returns the gradebook descriptor and the export-file descriptor of the store.
func resources(st *engine.Store) (gradebooks, files *engine.Resource, err error) {
	if st == nil {
		return nil, nil, fmt.Errorf("gradebook: no partition store in the request context")
	}
	var ok bool
	if gradebooks, ok = st.Registry().ByName(gradebookName); !ok {
		return nil, nil, fmt.Errorf("gradebook: no %s descriptor", gradebookName)
	}
	if files, ok = st.Registry().ByName(fileName); !ok {
		return nil, nil, fmt.Errorf("gradebook: no %s descriptor", fileName)
	}
	return gradebooks, files, nil
}

// ExpiryAt returns the Expiry of an export made at now: now + Lifetime, rounded up to the next
// multiple of Rounding (a value already on one stays), in UTC.
func ExpiryAt(now time.Time) engine.DateTime {
	t := now.UTC().Add(Lifetime)
	if r := t.Truncate(Rounding); !r.Equal(t) {
		t = r.Add(Rounding)
	}
	return engine.DateTime{Time: t}
}
