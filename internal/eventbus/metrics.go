package eventbus

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Collector exposes a bus's Stats as Prometheus metrics, read when scraped.
type Collector struct {
	stats func() Stats
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector of b's counters; register it once per
// bus.
func NewCollector(b interface{ Stats() Stats }) *Collector {
	return &Collector{stats: b.Stats}
}

var (
	descSubscribers = prometheus.NewDesc("graphcd_eventbus_subscribers",
		"Open event subscriptions on this replica.", nil, nil)
	descPublished = prometheus.NewDesc("graphcd_eventbus_events_total",
		"Events handed to this replica's subscribers' hub (published here or received from Redis).", nil, nil)
	descDelivered = prometheus.NewDesc("graphcd_eventbus_deliveries_total",
		"Events handed to subscribers.", nil, nil)
	descCoalesced = prometheus.NewDesc("graphcd_eventbus_coalesced_total",
		"Events waiting for a slow subscriber replaced by a newer one of the same app and type.", nil, nil)
	descDropped = prometheus.NewDesc("graphcd_eventbus_dropped_total",
		"Events a slow subscriber missed because its buffer was full.", nil, nil)
	descLagged = prometheus.NewDesc("graphcd_eventbus_lagged_markers_total",
		"Lagged markers (refetch requests) handed to subscribers.", nil, nil)
	descReceived = prometheus.NewDesc("graphcd_eventbus_redis_received_total",
		"Messages read from the Redis channel.", nil, nil)
	descInvalid = prometheus.NewDesc("graphcd_eventbus_redis_invalid_total",
		"Messages from Redis dropped as malformed, too large, of an unknown type or replayed.", nil, nil)
	descGaps = prometheus.NewDesc("graphcd_eventbus_redis_gaps_total",
		"Times events from Redis were found missing (a reconnect or a hole in a publisher's sequence).", nil, nil)
	descPublishErrors = prometheus.NewDesc("graphcd_eventbus_redis_publish_errors_total",
		"Events that could not be sent to Redis.", nil, nil)
)

// Describe sends the metrics' descriptions.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSubscribers, descPublished, descDelivered, descCoalesced, descDropped,
		descLagged, descReceived, descInvalid, descGaps, descPublishErrors} {
		ch <- d
	}
}

// Collect sends the current values.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(descSubscribers, prometheus.GaugeValue, float64(s.Subscribers))
	for _, m := range []struct {
		d *prometheus.Desc
		v uint64
	}{
		{descPublished, s.Published}, {descDelivered, s.Delivered}, {descCoalesced, s.Coalesced},
		{descDropped, s.Dropped}, {descLagged, s.Lagged}, {descReceived, s.Received},
		{descInvalid, s.Invalid}, {descGaps, s.Gaps}, {descPublishErrors, s.PublishErrors},
	} {
		ch <- prometheus.MustNewConstMetric(m.d, prometheus.CounterValue, float64(m.v))
	}
}
