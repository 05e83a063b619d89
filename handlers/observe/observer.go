package observe

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Options configure an Observer.
type Options struct {
	// Logger receives access lines and failures; nil means slog.Default() at the time of logging.
	Logger *slog.Logger
	// Access, when set, receives the access lines that Logger's handler would write, in its
	// format, without building slog records (see AccessOutput); Logger still says which levels
	// are written. It must describe Logger's handler.
	Access *AccessOutput
	// Registerer receives the metrics; nil keeps them unregistered (counted, never exported).
	Registerer prometheus.Registerer
	// ClientAddress, when set, gives the access line's client field: the address that the
	// abuse limits count a request under (behind trusted proxies, from X-Forwarded-For), beside
	// the socket's peer in remote.
	ClientAddress func(*http.Request) string
}

// Observer is the middleware that gives each request its id, access line and metrics, and the
// state that keeps the log of failures bounded. Build it with New, once per process.
type Observer struct {
	log    *slog.Logger
	access *AccessOutput
	client func(*http.Request) string

	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	inFlight     prometheus.Gauge
	panics       prometheus.Counter
	authFailures *prometheus.CounterVec
	tokens       *prometheus.CounterVec
	exportBytes  *prometheus.HistogramVec
	exportTime   *prometheus.HistogramVec
	importRows   *prometheus.HistogramVec
	importTime   *prometheus.HistogramVec
	idempotency  *prometheus.CounterVec

	routesMu  sync.RWMutex
	routes    map[string]*Route
	unmatched *Route

	failures failureLog
}

// Metric names, as docs/operations.md lists them.
const (
	MetricRequests     = "credo_http_requests_total"
	MetricDuration     = "credo_http_request_duration_seconds"
	MetricInFlight     = "credo_http_requests_in_flight"
	MetricPanics       = "credo_http_panics_total"
	MetricAuthFailures = "credo_auth_failures_total"
	MetricTokens       = "credo_tokens_issued_total"
	MetricExportBytes  = "credo_gradebook_export_bytes"
	MetricExportTime   = "credo_gradebook_export_duration_seconds"
	MetricImportRows   = "credo_people_import_rows"
	MetricImportTime   = "credo_people_import_duration_seconds"
	MetricIdempotency  = "credo_idempotency_requests_total"
)

// New returns an Observer registering its metrics with opts.Registerer.
func New(opts Options) *Observer {
	o := &Observer{
		log:    opts.Logger,
		access: opts.Access,
		client: opts.ClientAddress,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRequests,
			Help: "HTTP requests served, by route pattern, method and status."}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricDuration,
			Help:    "Time from reading a request's header to its handler's return, by route pattern, method and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}},
			[]string{"route", "method", "status"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricInFlight,
			Help: "HTTP requests being served."}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{Name: MetricPanics,
			Help: "Handler panics recovered into 500 answers."}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricAuthFailures,
			Help: "Requests refused with 401, and cookie writes from another origin refused with 403 (reason cross_origin), by reason and kind of credential."}, []string{"reason", "credential"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricTokens,
			Help: "Access tokens and session cookies issued, by kind."}, []string{"kind"}),
		exportBytes: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricExportBytes,
			Help: "Size of the gradebook export files written, by format.", Buckets: prometheus.ExponentialBuckets(1024, 4, 10)},
			[]string{"format"}),
		exportTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricExportTime,
			Help: "Time to write a gradebook export, by format.", Buckets: prometheus.ExponentialBuckets(0.01, 3, 10)},
			[]string{"format"}),
		importRows: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricImportRows,
			Help: "Rows per people import, by outcome (imported, refused, failed).", Buckets: prometheus.ExponentialBuckets(1, 4, 10)},
			[]string{"outcome"}),
		importTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: MetricImportTime,
			Help: "Time to check and write a people import, by outcome.", Buckets: prometheus.ExponentialBuckets(0.01, 3, 10)},
			[]string{"outcome"}),
		idempotency: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricIdempotency,
			Help: "Requests that carried an Idempotency-Key, by outcome (stored, replayed, in_flight, mismatch, not_stored, lost)."},
			[]string{"outcome"}),
		routes: map[string]*Route{},
	}
	o.unmatched = o.Route(Unmatched)
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(o.requests, o.duration, o.inFlight, o.panics, o.authFailures, o.tokens,
			o.exportBytes, o.exportTime, o.importRows, o.importTime, o.idempotency)
	}
	return o
}

func (o *Observer) logger() *slog.Logger {
	if o.log != nil {
		return o.log
	}
	return slog.Default()
}

// observerOf returns the observer serving a request, nil outside the middleware.
func observerOf(e *Entry) *Observer {
	if e == nil {
		return nil
	}
	return e.obs
}

// since returns the seconds from start, for histograms.
func since(start time.Time) float64 { return time.Since(start).Seconds() }

// InFlight returns the requests being served (the gauge credo_http_requests_in_flight): at a
// shutdown's deadline, the requests it abandons.
func (o *Observer) InFlight() int {
	var m dto.Metric
	if err := o.inFlight.Write(&m); err != nil {
		return 0
	}
	return int(m.GetGauge().GetValue())
}
