// Package metrics exports kiln's Prometheus metrics: the hooks of the
// engine, the agent loop and the sandboxes, and the queue gauges read from
// the store at scrape time (kiln serve's GET /metrics).
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/sandboxes"
)

// Prometheus implements the metric hooks of the engine (engine.Metrics),
// the agent loop (agent.CallMetrics) and the sandboxes (sandboxes.Metrics)
// with Prometheus, on a registry of its own that also holds the Go and
// process collectors and a collector reading queue depths from the store at
// scrape time. The README's "Metrics" section lists what it exports.
type Prometheus struct {
	reg *prometheus.Registry
	// models and endpoints bound the label values that servers and specs
	// choose; lanes, classes, stages and outcomes are kiln's own.
	models, endpoints *labelCap

	attemptsStarted *prometheus.CounterVec   // lane
	attempts        *prometheus.CounterVec   // lane, model, outcome
	attemptSeconds  *prometheus.HistogramVec // lane, outcome
	verdicts        *prometheus.CounterVec   // lane, model, class
	tokens          *prometheus.CounterVec   // model, kind
	calls           *prometheus.HistogramVec // model, endpoint
	ttft            *prometheus.HistogramVec // model, endpoint
	faults          *prometheus.CounterVec   // lane, class
	stages          *prometheus.HistogramVec // lane, stage
	cache           *prometheus.CounterVec   // lane, result
	gpuSlots        *prometheus.GaugeVec     // lane, state
}

var (
	_ engine.Metrics    = (*Prometheus)(nil)
	_ agent.CallMetrics = (*Prometheus)(nil)
	_ sandboxes.Metrics = (*Prometheus)(nil)
)

// Metric label values besides the hooks' own.
const (
	LabelUnknown = "unknown" // no model or endpoint was reported
	LabelOther   = "other"   // past the bound on distinct values
	// MaxModelLabels bounds the distinct model and endpoint label values.
	MaxModelLabels = 64
)

// New registers kiln's metrics on a new registry. st, when set,
// is read at scrape time for the queue gauges (kiln_tasks, kiln_campaigns).
func New(st *runs.Store, log *slog.Logger) *Prometheus {
	reg := prometheus.NewRegistry()
	m := &Prometheus{reg: reg, models: newLabelCap(MaxModelLabels), endpoints: newLabelCap(MaxModelLabels)}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		reg.MustRegister(h)
		return h
	}
	m.attemptsStarted = counter("kiln_attempts_started_total",
		"Attempts started: a worker claimed a task.", "lane")
	m.attempts = counter("kiln_attempts_total",
		"Attempts ended, by outcome: judged (attempt and verdict stored), requeued (the task went back to the queue unjudged), lost (the lease was lost).",
		"lane", "model", "outcome")
	m.attemptSeconds = histogram("kiln_attempt_duration_seconds",
		"Wall time of attempts, model calls, tool calls and verification included.",
		prometheus.ExponentialBuckets(0.1, 2, 14), "lane", "outcome")
	m.verdicts = counter("kiln_verdicts_total",
		`Verdicts stored, by class: "pass", "pending" (passed; stages left for another host, not a pass yet), "reference_error" (a task fault: the task's own reference failed) or the failure class.`,
		"lane", "model", "class")
	m.tokens = counter("kiln_tokens_total",
		"Tokens of model replies, by kind (prompt, completion, reasoning).", "model", "kind")
	m.calls = histogram("kiln_model_call_duration_seconds",
		"Wall time of model calls that returned a reply.",
		prometheus.ExponentialBuckets(0.05, 2, 14), "model", "endpoint")
	m.ttft = histogram("kiln_model_ttft_seconds",
		"Time to the first streamed token of model calls that streamed.",
		prometheus.ExponentialBuckets(0.01, 2, 14), "model", "endpoint")
	m.faults = counter("kiln_model_faults_total",
		"Failed model calls by fault class (rate_limited, server_error, timeout, ...), retried ones included.",
		"lane", "class")
	m.stages = histogram("kiln_sandbox_stage_duration_seconds",
		"Duration of the verifier stages that ran (compile, run, compare, ...), repair turns included.",
		prometheus.ExponentialBuckets(0.005, 2.5, 12), "lane", "stage")
	m.cache = counter("kiln_compile_cache_lookups_total",
		"Compiles of the lanes' content-hash caches: answered from the cache (hit) or run (miss).",
		"lane", "result")
	m.gpuSlots = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kiln_gpu_slots",
		Help: "GPU run slots of the lanes of running campaigns, by state (idle, busy, quarantined)."}, []string{"lane", "state"})
	reg.MustRegister(m.gpuSlots)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if st != nil {
		reg.MustRegister(newStoreCollector(st, log))
	}
	return m
}

// Gatherer is the registry, for reading the metrics in process.
func (m *Prometheus) Gatherer() prometheus.Gatherer { return m.reg }

// Handler serves the registry in the Prometheus text format; a collector
// that fails leaves its metrics out rather than failing the scrape.
func (m *Prometheus) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Registry: m.reg})
}

// AttemptStarted implements engine.Metrics.
func (m *Prometheus) AttemptStarted(lane string) {
	m.attemptsStarted.WithLabelValues(lane).Inc()
}

// AttemptEnded implements engine.Metrics.
func (m *Prometheus) AttemptEnded(a engine.AttemptStats) {
	model := m.models.value(a.Model)
	m.attempts.WithLabelValues(a.Lane, model, a.Outcome).Inc()
	m.attemptSeconds.WithLabelValues(a.Lane, a.Outcome).Observe(a.Duration.Seconds())
	if a.Outcome == engine.OutcomeJudged {
		m.verdicts.WithLabelValues(a.Lane, model, a.Class).Inc()
	}
	for _, s := range a.Stages {
		// Stages without a timing (static checks, skipped stages) are
		// left out.
		if s.Skipped || s.Duration <= 0 {
			continue
		}
		m.stages.WithLabelValues(a.Lane, s.Name).Observe(s.Duration.Seconds())
	}
}

// ModelFault implements engine.Metrics.
func (m *Prometheus) ModelFault(lane, class string) {
	m.faults.WithLabelValues(lane, class).Inc()
}

// ModelCall implements agent.CallMetrics.
func (m *Prometheus) ModelCall(model, endpoint string, u agent.Usage) {
	model, endpoint = m.models.value(model), m.endpoints.value(endpoint)
	m.tokens.WithLabelValues(model, "prompt").Add(float64(u.PromptTokens))
	m.tokens.WithLabelValues(model, "completion").Add(float64(u.CompletionTokens))
	m.tokens.WithLabelValues(model, "reasoning").Add(float64(u.ReasoningTokens))
	m.calls.WithLabelValues(model, endpoint).Observe(u.Latency.Seconds())
	if u.TTFT > 0 {
		m.ttft.WithLabelValues(model, endpoint).Observe(u.TTFT.Seconds())
	}
}

// CompileCache implements sandboxes.Metrics.
func (m *Prometheus) CompileCache(lane string, hit bool) {
	result := "miss"
	if hit {
		result = "hit"
	}
	m.cache.WithLabelValues(lane, result).Inc()
}

// GPUSlots implements sandboxes.Metrics.
func (m *Prometheus) GPUSlots(lane, state string, delta int) {
	m.gpuSlots.WithLabelValues(lane, state).Add(float64(delta))
}

// labelCap bounds the distinct values of a label: past max, values not
// seen before read "other"; the empty value reads "unknown".
type labelCap struct {
	max  int
	mu   sync.Mutex
	seen map[string]bool
}

func newLabelCap(max int) *labelCap { return &labelCap{max: max, seen: map[string]bool{}} }

func (c *labelCap) value(v string) string {
	if v == "" {
		return LabelUnknown
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[v] {
		return v
	}
	if len(c.seen) >= c.max {
		return LabelOther
	}
	c.seen[v] = true
	return v
}

// storeCollector reads, at scrape time, the campaigns by state and the
// queued and leased tasks of each queued or running campaign.
type storeCollector struct {
	st        *runs.Store
	log       *slog.Logger
	campaigns *prometheus.Desc
	tasks     *prometheus.Desc
}

// storeScrapeTimeout bounds the store reads of one scrape.
const storeScrapeTimeout = 5 * time.Second

func newStoreCollector(st *runs.Store, log *slog.Logger) *storeCollector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &storeCollector{st: st, log: log,
		campaigns: prometheus.NewDesc("kiln_campaigns", "Campaigns in the store, by state.", []string{"state"}, nil),
		tasks: prometheus.NewDesc("kiln_tasks",
			"Queued and leased tasks of each queued or running campaign (the queue depth).",
			[]string{"campaign", "name", "lane", "state"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.campaigns
	ch <- c.tasks
}

// Collect implements prometheus.Collector.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), storeScrapeTimeout)
	defer cancel()
	camps, err := c.st.ListCampaigns(ctx)
	if err != nil {
		c.log.Warn("metrics: list campaigns", "err", err)
		ch <- prometheus.NewInvalidMetric(c.campaigns, err)
		return
	}
	byState := map[runs.CampaignState]int{}
	for _, s := range []runs.CampaignState{runs.CampaignQueued, runs.CampaignRunning, runs.CampaignDone,
		runs.CampaignFailed, runs.CampaignCancelled} {
		byState[s] = 0
	}
	for _, camp := range camps {
		byState[camp.State]++
		if camp.State != runs.CampaignQueued && camp.State != runs.CampaignRunning {
			continue
		}
		n, err := c.st.Counts(ctx, camp.ID, -1)
		if err != nil {
			c.log.Warn("metrics: count tasks", "run", camp.ID, "err", err)
			ch <- prometheus.NewInvalidMetric(c.tasks, err)
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(n.Queued), camp.ID, camp.Name, camp.Lane, "queued")
		ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(n.Leased), camp.ID, camp.Name, camp.Lane, "leased")
	}
	for s, n := range byState {
		ch <- prometheus.MustNewConstMetric(c.campaigns, prometheus.GaugeValue, float64(n), string(s))
	}
}
