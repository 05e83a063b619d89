package gradebook

import (
	"fmt"
	"net/http"
	"time"

	"credo/engine"
	"credo/handlers/limit"
	"credo/handlers/route"
)

// The routes, relative to /v2/{partition}/, and the permission object both use.
const (
	Object       = "progress/gradebooks"
	ExportPath   = Object + "/export"
	DownloadPath = Object + "/download/{ExportKey}"
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

// Config is what the export and download operations need from the process. The zero Config
// serves on the real clock.
type Config struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Limit bounds exports per caller (limit.Export); nil means its default. Each export
	// reads every matching gradebook and writes a file, so a caller may not loop on it.
	Limit *limit.Limiter
}

func (c Config) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// Routes returns the export and download routes.
func Routes(cfg Config) []route.Route {
	if cfg.Limit == nil {
		cfg.Limit = limit.New("exports", limit.Defaults[limit.Export], cfg.Now)
	}
	h := &handler{cfg: cfg}
	file := []route.Content{
		{MediaType: "application/json", Schema: route.ArrayOf(route.Schema{Ref: gradebookName})},
		{MediaType: "text/csv", Schema: route.String("RFC 4180 CSV with a header row of member names.")},
	}
	disposition := route.Header{Name: "Content-Disposition", Required: true, Schema: route.String(""),
		Description: "attachment; filename=gradebook.json or gradebook.csv"}
	modified := route.Header{Name: "Last-Modified", Required: true, Schema: route.String(""),
		Description: "When the export was made (an HTTP date), for If-Modified-Since, If-Unmodified-Since and If-Range."}
	ranges := route.Header{Name: "Accept-Ranges", Required: true, Schema: route.String(""),
		Description: "`bytes`: the file is served by byte ranges too (Range)."}
	contentRange := func(d string) route.Header {
		return route.Header{Name: "Content-Range", Required: true, Schema: route.String(""), Description: d}
	}
	return []route.Route{
		{
			Method:      http.MethodGet,
			Path:        ExportPath,
			Tag:         "gradebook",
			OperationID: "exportGradebooks",
			Summary:     "Export the gradebooks matching the list filters to a JSON or CSV file and answer where to download it.",
			Description: "Takes the parameters of the gradebook list; without Take every match is exported (and Page must be 1). " +
				"An empty result is an empty file, not an error.",
			Access:  route.Protected,
			Object:  Object,
			Need:    "Read",
			QueryOf: gradebookName,
			Responses: []route.Response{{Status: http.StatusOK, Description: "Where and until when the file can be downloaded.",
				Content: []route.Content{{MediaType: "application/json", Schema: route.Schema{Go: Export{}, Members: map[string]route.Schema{
					"DownloadUrl": {Format: "uri-reference", Description: "The path of the download operation for this export."},
					"ExportFormat": {Enum: []string{string(engine.FormatJSON), string(engine.FormatCSV)},
						Description: "The file's format: the export's `Format`."},
					"ExportKey": {Format: "uuid", Description: "The export's key, the `ExportKey` of the download."},
				}}}}}},
			Errors:  []int{http.StatusBadRequest, http.StatusNotAcceptable, http.StatusTooManyRequests, http.StatusServiceUnavailable},
			Needs:   h.resolve,
			Handler: h.export,
		},
		{
			Method:      http.MethodGet,
			Path:        DownloadPath,
			Tag:         "gradebook",
			OperationID: "downloadGradebookExport",
			Summary:     "Download a gradebook export file until its Expiry.",
			Description: "Ranges (Range, If-Range) and conditional requests (If-Modified-Since, If-Unmodified-Since) are " +
				"answered as for any file. The file has no ETag, so an If-Match other than `*` is a 412, as is an " +
				"If-Unmodified-Since before the export was made.",
			Access: route.Protected,
			Object: Object,
			Need:   "Read",
			Params: []route.Param{{Name: "ExportKey", In: route.InPath, Schema: route.UUID(""),
				Description: "The ExportKey of the export; an unknown, expired or malformed one, or another organization's, is a 404."}},
			Responses: []route.Response{
				{Status: http.StatusOK, Description: "The file, in the export's format: an array of Gradebook records (JSON) or CSV.",
					Headers: []route.Header{disposition, modified, ranges}, Content: file},
				{Status: http.StatusPartialContent, Description: "The range asked for.", Headers: []route.Header{disposition,
					modified, ranges, contentRange("The bytes sent.")}},
				{Status: http.StatusNotModified, Description: "The file has not changed since If-Modified-Since.",
					Headers: []route.Header{disposition, modified}},
				{Status: http.StatusRequestedRangeNotSatisfiable, Description: "The range lies outside the file.",
					Headers: []route.Header{disposition, contentRange("`bytes */` and the file's length.")},
					Content: []route.Content{{MediaType: "text/plain", Schema: route.String("")}}},
			},
			Errors: []int{http.StatusNotFound, http.StatusNotAcceptable, http.StatusPreconditionFailed,
				http.StatusServiceUnavailable},
			Needs:   h.resolve,
			Handler: h.download,
		},
	}
}

// handler serves both routes with one configuration and the descriptors that resolve (the
// routes' Needs) keeps.
type handler struct {
	cfg               Config
	gradebooks, files *engine.Resource
}

// resolve resolves the gradebook and export-file descriptors in reg and keeps them.
func (h *handler) resolve(reg *engine.Registry) error {
	var err error
	h.gradebooks, h.files, err = resourcesOf(reg)
	return err
}

// storeOf is the request's partition store.
func storeOf(r *http.Request) (*engine.Store, error) {
	st := engine.StoreFrom(r.Context())
	if st == nil {
		return nil, fmt.Errorf("gradebook: no partition store in the request context")
	}
	return st, nil
}

// resourcesOf resolves the gradebook and export-file descriptors in reg.
func resourcesOf(reg *engine.Registry) (gradebooks, files *engine.Resource, err error) {
	var ok bool
	if gradebooks, ok = reg.ByName(gradebookName); !ok {
		return nil, nil, fmt.Errorf("gradebook: no %s descriptor", gradebookName)
	}
	if files, ok = reg.ByName(fileName); !ok {
		return nil, nil, fmt.Errorf("gradebook: no %s descriptor", fileName)
	}
	if _, ok = files.Filter("ExpiryBefore"); !ok {
		return nil, nil, fmt.Errorf("gradebook: %s has no ExpiryBefore filter", files.Name)
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
