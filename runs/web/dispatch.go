package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/jobs"
)

// Dispatch reports the scale-out queue of kiln serve --dispatch to the
// workers page (/workers). Left nil in Config, the page says dispatch is
// off.
type Dispatch interface {
	DispatchStatus(ctx context.Context) (DispatchStatus, error)
}

// DispatchStatus is the state of the scale-out queue: the workers heard
// from, the jobs of each capability, and what became of them. It is also
// the body of GET /v1/queue.
type DispatchStatus struct {
	// URL is the queue's NATS URL.
	URL string `json:"url"`
	// Workers are the worker hosts heard from (their heartbeats).
	Workers []jobs.WorkerInfo `json:"workers"`
	// Queues are the jobs of each capability: waiting, in flight, dead.
	Queues []jobs.CapabilityStats `json:"queues"`
	// QueueError says why Queues could not be read (the queue's server is
	// unreachable); the rest comes from the store.
	QueueError string `json:"queue_error,omitempty"`
	// Results counts the stored job results and the retries.
	Results JobCounts `json:"results"`
	// RetryAfter and MaxRetries are the retry policy of failed jobs
	// (--dispatch-retry-after, --dispatch-retries).
	RetryAfter time.Duration `json:"retry_after_ns"`
	MaxRetries int           `json:"max_retries"`
	// Retries are the pending verdicts whose job failed: a retry waiting
	// for its backoff or in flight, or none left (exhausted).
	Retries []Retry `json:"retries"`
	// Failures are the latest failed or dead job results, newest first.
	Failures []JobFailure `json:"failures"`
	// Scanned is when the retries were last worked out.
	Scanned time.Time `json:"scanned,omitzero"`
}

// JobCounts counts job results.
type JobCounts struct {
	Done   int `json:"done"`
	Failed int `json:"failed"`
	Dead   int `json:"dead"`
	// RetriesWaiting: pending verdicts whose failed job will be sent
	// again (after its backoff, or sent and not yet back).
	RetriesWaiting int `json:"retries_waiting"`
	// RetriesExhausted: pending verdicts whose every try failed; they
	// stay pending until completed by hand (kiln rescore --pending).
	RetriesExhausted int `json:"retries_exhausted"`
}

// Retry states.
const (
	RetryWaiting   = "waiting"   // the next try goes at NextAt
	RetrySent      = "sent"      // the next try is in the queue or running
	RetryExhausted = "exhausted" // no try left
)

// Retry is a pending verdict whose complete job failed.
type Retry struct {
	Campaign   string `json:"campaign"`
	TaskKey    string `json:"task_key"`
	AttemptID  string `json:"attempt_id"`
	VerdictID  string `json:"verdict_id"`
	Capability string `json:"capability"`
	// Tries is how many tries failed.
	Tries int    `json:"tries"`
	State string `json:"state"`
	// NextJob and NextAt: the next try's job id and when it goes
	// (waiting, sent).
	NextJob string    `json:"next_job,omitempty"`
	NextAt  time.Time `json:"next_at,omitzero"`
	// The last failed try.
	LastJob    string    `json:"last_job"`
	LastStatus string    `json:"last_status"`
	LastWorker string    `json:"last_worker,omitempty"`
	LastReason string    `json:"last_reason"`
	LastAt     time.Time `json:"last_at"`
}

// JobFailure is a failed or dead job result.
type JobFailure struct {
	JobID      string    `json:"job_id"`
	Kind       string    `json:"kind"`
	Status     string    `json:"status"`
	Worker     string    `json:"worker,omitempty"`
	Deliveries int       `json:"deliveries"`
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}

// FailureOf is the JobFailure of a stored job result.
func FailureOf(r runs.JobResult) JobFailure {
	return JobFailure{JobID: r.JobID, Kind: r.Kind, Status: r.Status, Worker: r.Worker, Deliveries: r.Deliveries,
		Reason: r.Reason, At: r.CreatedAt}
}

// workersPage is the data of /workers.
type workersPage struct {
	Title   string
	Off     bool
	Err     string
	S       DispatchStatus
	Workers []workerRow
	Retries []retryRow
	Fails   []failRow
	Retry   string // the policy, in words
}

type workerRow struct {
	jobs.WorkerInfo
	Caps      string
	GPUText   string // "2 x NVIDIA H100 80GB HBM3 (driver 580.1)" or "none"
	LanesText string
	SeenText  string
	UpText    string
}

type retryRow struct {
	Retry
	NextText string
	LastText string
}

type failRow struct {
	JobFailure
	AtText string
}

func (h *Handler) workers(w http.ResponseWriter, r *http.Request) {
	p := workersPage{Title: "Workers"}
	if h.cfg.Dispatch == nil {
		p.Off = true
		h.render(w, r, http.StatusOK, "workers", p)
		return
	}
	s, err := h.cfg.Dispatch.DispatchStatus(r.Context())
	if err != nil {
		h.serviceError(w, r, "dispatch status", err)
		return
	}
	now := h.cfg.Now()
	p.S = s
	for _, wi := range s.Workers {
		p.Workers = append(p.Workers, workerRow{WorkerInfo: wi, Caps: strings.Join(wi.Capabilities, ", "),
			GPUText: gpuText(wi.GPUs, wi.Driver), LanesText: strings.Join(wi.Lanes, ", "),
			SeenText: ago(now, wi.LastSeen), UpText: ago(now, wi.Started)})
	}
	for _, rt := range s.Retries {
		row := retryRow{Retry: rt, LastText: ago(now, rt.LastAt)}
		switch rt.State {
		case RetryWaiting:
			row.NextText = "in " + short(rt.NextAt.Sub(now))
		case RetrySent:
			row.NextText = "sent"
		}
		p.Retries = append(p.Retries, row)
	}
	for _, f := range s.Failures {
		p.Fails = append(p.Fails, failRow{JobFailure: f, AtText: ago(now, f.At)})
	}
	if s.MaxRetries == 0 {
		p.Retry = "A failed job is not sent again"
	} else {
		p.Retry = fmt.Sprintf("A failed job is sent again up to %d times, %s after the failure, doubling each time",
			s.MaxRetries, short(s.RetryAfter))
	}
	h.render(w, r, http.StatusOK, "workers", p)
}

// ago is how long before now t was ("12s ago"); "-" for the zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return short(now.Sub(t)) + " ago"
}

// short is a duration rounded for reading: 850ms, 12s, 4m10s, 3h5m.
func short(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		d = d.Round(time.Second)
		if m, s := d/time.Minute, d%time.Minute/time.Second; s != 0 {
			return fmt.Sprintf("%dm%ds", m, s)
		}
		return fmt.Sprintf("%dm", d/time.Minute)
	default:
		d = d.Round(time.Minute)
		if h, m := d/time.Hour, d%time.Hour/time.Minute; m != 0 {
			return fmt.Sprintf("%dh%dm", h, m)
		}
		return fmt.Sprintf("%dh", d/time.Hour)
	}
}

// gpuText says a worker's GPUs in a line: identical names counted.
func gpuText(gpus []string, driver string) string {
	if len(gpus) == 0 {
		return "none"
	}
	var parts []string
	for i := 0; i < len(gpus); {
		j := i
		for j < len(gpus) && gpus[j] == gpus[i] {
			j++
		}
		if j-i > 1 {
			parts = append(parts, fmt.Sprintf("%d x %s", j-i, gpus[i]))
		} else {
			parts = append(parts, gpus[i])
		}
		i = j
	}
	out := strings.Join(parts, ", ")
	if driver != "" {
		out += " (driver " + driver + ")"
	}
	return out
}
