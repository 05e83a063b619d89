package observe

import (
	"github.com/prometheus/client_golang/prometheus"

	"credo/engine"
)

// Metric names of the database pools.
const (
	MetricPoolMax      = "credo_db_pool_max_connections"
	MetricPoolConns    = "credo_db_pool_connections"
	MetricPoolWaits    = "credo_db_pool_waits_total"
	MetricPoolWaitTime = "credo_db_pool_wait_seconds_total"
)

// poolCollector reads the pools' statistics when Prometheus scrapes, so that serving a request
// costs nothing for them.
type poolCollector struct {
	stats                       func() []engine.PoolStats
	max, conns, waits, waitTime *prometheus.Desc
}

// NewPoolCollector returns a collector of the statistics of the pools that stats reports
// (engine.Database.Stats), labelled by pool: a partition on SQLite, "postgres" for the pool
// PostgreSQL partitions share.
func NewPoolCollector(stats func() []engine.PoolStats) prometheus.Collector {
	pool := []string{"pool"}
	return &poolCollector{
		stats: stats,
		max:   prometheus.NewDesc(MetricPoolMax, "The most connections the pool opens.", pool, nil),
		conns: prometheus.NewDesc(MetricPoolConns, "Open connections of the pool, by state (in_use, idle).",
			[]string{"pool", "state"}, nil),
		waits:    prometheus.NewDesc(MetricPoolWaits, "Acquisitions that found no idle connection and waited.", pool, nil),
		waitTime: prometheus.NewDesc(MetricPoolWaitTime, "Time spent waiting for a connection.", pool, nil),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.max
	ch <- c.conns
	ch <- c.waits
	ch <- c.waitTime
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.stats() {
		ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(s.Max), s.Pool)
		ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.InUse), s.Pool, "in_use")
		ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.Idle), s.Pool, "idle")
		ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(s.Waits), s.Pool)
		ch <- prometheus.MustNewConstMetric(c.waitTime, prometheus.CounterValue, s.WaitTime.Seconds(), s.Pool)
	}
}
