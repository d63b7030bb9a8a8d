package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StoreFunc stores a result. It must be idempotent by Result.JobID (a
// result may come twice: a worker that died after publishing it, a
// redelivery) and durable when it returns nil: only then is the result
// acked. An error marked with Permanent (errors.Is(err, ErrPermanent): the
// result refers to an attempt, a verdict or a campaign that no longer
// exists) dead-letters the result: it is copied to kiln.dead.<capability>
// with the reason and never offered again. Any other error (SQLite busy, a
// full disk) leaves it in the stream: it is offered again after a delay
// that doubles with each delivery, from StoreRetryBase to StoreRetryMax.
type StoreFunc func(ctx context.Context, r Result) error

// Delays before a result (or a dead letter) the store could not take is
// offered again: StoreRetryBase after the first delivery, doubling with
// each, at most StoreRetryMax.
const (
	StoreRetryBase = time.Second
	StoreRetryMax  = time.Minute
)

// Headers of a message on the dead-letter stream.
const (
	// DeadReasonHeader says why it was dead-lettered.
	DeadReasonHeader = "Kiln-Dead-Reason"
	// DeadOfHeader says what it is: "job" (a job's message, delivered
	// MaxDeliver times without a result) or "result" (a result the store
	// refused for good).
	DeadOfHeader = "Kiln-Dead-Of"
)

// Collector is the daemon's side of results: it takes results from the
// results stream and dead letters from the max-deliveries advisories, and
// keeps the list of live workers from their heartbeats.
type Collector struct {
	q     *Queue
	nc    *nats.Conn
	store StoreFunc
	log   *slog.Logger

	mu      sync.Mutex
	workers map[string]WorkerInfo
	cancel  context.CancelFunc
	done    chan struct{}
	hbSub   *nats.Subscription
	stopped bool
}

// NewCollector returns a collector storing results with store.
func NewCollector(q *Queue, nc *nats.Conn, store StoreFunc, log *slog.Logger) *Collector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Collector{q: q, nc: nc, store: store, log: log, workers: map[string]WorkerInfo{}}
}

// Start begins consuming; it returns at once.
func (c *Collector) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return errors.New("collector: already started")
	}
	sub, err := c.nc.Subscribe(HeartbeatPrefix+">", c.heartbeat)
	if err != nil {
		return fmt.Errorf("collector: heartbeats: %w", err)
	}
	c.hbSub = sub
	results, err := c.q.js.Consumer(ctx, ResultsStream, daemonConsumer)
	if err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	events, err := c.q.js.Consumer(ctx, EventsStream, daemonConsumer)
	if err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel, c.done = cancel, make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.loop(cctx, results, c.onResult) }()
	go func() { defer wg.Done(); c.loop(cctx, events, c.onEvent) }()
	go func() { wg.Wait(); close(c.done) }()
	return nil
}

// Stop stops consuming: the message in hand is finished (stored and acked,
// or left for redelivery). Idempotent.
func (c *Collector) Stop(ctx context.Context) error {
	c.mu.Lock()
	if c.done == nil || c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	c.mu.Unlock()
	_ = c.hbSub.Unsubscribe()
	c.cancel()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop pulls messages one at a time and hands them to fn. fn's work is
// finished with the context that loop was started with, cancelled only by
// Stop.
func (c *Collector) loop(ctx context.Context, cons jetstream.Consumer, fn func(context.Context, jetstream.Msg)) {
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, time.Second)
		batch, err := cons.Fetch(64, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			if ctx.Err() == nil {
				c.log.Warn("jobs: fetch", "err", err)
				sleepCtx(ctx, time.Second)
			}
			continue
		}
		for m := range batch.Messages() {
			fn(context.WithoutCancel(ctx), m)
		}
		cancel()
		if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, nats.ErrTimeout) &&
			!errors.Is(err, context.DeadlineExceeded) {
			c.log.Warn("jobs: fetch", "err", err)
		}
	}
}

func (c *Collector) onResult(ctx context.Context, m jetstream.Msg) {
	var r Result
	if err := json.Unmarshal(m.Data(), &r); err != nil || r.JobID == "" {
		c.log.Error("jobs: malformed result dropped", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	if err := c.store(ctx, r); err != nil {
		if !IsPermanent(err) {
			c.retryLater(m, "jobs: store result", "job", r.JobID, "err", err)
			return
		}
		// Retrying cannot cure it: keep it where it can be inspected, say
		// why, and stop offering it.
		capability := r.Capability
		if !ValidCapability(capability) {
			capability = "unknown"
		}
		reason := "store refused the result for good: " + err.Error()
		dm := nats.NewMsg(DeadPrefix + capability)
		dm.Data = m.Data()
		dm.Header.Set(DeadReasonHeader, reason)
		dm.Header.Set(DeadOfHeader, "result")
		if _, perr := c.q.js.PublishMsg(ctx, dm, jetstream.WithMsgID("result-"+r.JobID)); perr != nil {
			c.retryLater(m, "jobs: dead-letter result", "job", r.JobID, "err", perr)
			return
		}
		c.log.Error("jobs: result dead-lettered: the store refused it for good", "job", r.JobID, "kind", r.Kind,
			"worker", r.Worker, "subject", dm.Subject, "err", err)
		_ = m.Term()
		return
	}
	if err := m.DoubleAck(ctx); err != nil {
		// Not acked: it comes back and the store drops it as a duplicate.
		c.log.Warn("jobs: ack result", "job", r.JobID, "err", err)
	}
}

// retryDelay is the delay before a message delivered deliveries times is
// offered again: StoreRetryBase doubled per delivery after the first, at
// most StoreRetryMax.
func retryDelay(deliveries uint64) time.Duration {
	d := StoreRetryBase
	for i := uint64(1); i < deliveries && d < StoreRetryMax; i++ {
		d *= 2
	}
	return min(d, StoreRetryMax)
}

// retryLater naks m with a delay that grows with its delivery count (from
// its metadata). It logs at the first delivery and then at the 2nd, 4th,
// 8th, ... only: a store that stays down for an hour logs a dozen lines,
// not thousands.
func (c *Collector) retryLater(m jetstream.Msg, msg string, attrs ...any) {
	n := uint64(1)
	if md, err := m.Metadata(); err == nil && md.NumDelivered > 0 {
		n = md.NumDelivered
	}
	d := retryDelay(n)
	if n&(n-1) == 0 {
		c.log.Warn(msg+": will retry", append(attrs, "deliveries", n, "retry_in", d)...)
	}
	_ = m.NakWithDelay(d)
}

// maxDeliverAdvisory is JetStream's io.nats.jetstream.advisory.v1.max_deliver.
type maxDeliverAdvisory struct {
	Type       string `json:"type"`
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries int    `json:"deliveries"`
}

// onEvent dead-letters the job a max-deliveries advisory names: the job is
// copied to kiln.dead.<capability>, recorded as failed with its reason,
// and removed from the work queue, in an order that a crash at any point
// repeats harmlessly.
func (c *Collector) onEvent(ctx context.Context, m jetstream.Msg) {
	var a maxDeliverAdvisory
	if err := json.Unmarshal(m.Data(), &a); err != nil || a.Stream != JobsStream {
		_ = m.Term()
		return
	}
	raw, err := c.q.js.Stream(ctx, JobsStream)
	if err != nil {
		c.retryLater(m, "jobs: dead letter", "seq", a.StreamSeq, "err", err)
		return
	}
	sm, err := raw.GetMsg(ctx, a.StreamSeq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		_ = m.Ack() // already handled (or completed after all)
		return
	}
	if err != nil {
		c.retryLater(m, "jobs: dead letter", "seq", a.StreamSeq, "err", err)
		return
	}
	var j Job
	if err := json.Unmarshal(sm.Data, &j); err != nil {
		c.log.Error("jobs: malformed job dead-lettered", "seq", a.StreamSeq, "err", err)
		j = Job{ID: fmt.Sprintf("malformed-%d", a.StreamSeq), Capability: strings.TrimPrefix(sm.Subject, JobsPrefix)}
	}
	reason := fmt.Sprintf("dead letter: delivered %d times to workers of %q without a result (each worker died, hung past the ack wait, or the job kept failing)",
		a.Deliveries, j.Capability)
	dm := nats.NewMsg(DeadPrefix + j.Capability)
	dm.Data = sm.Data
	dm.Header.Set(DeadReasonHeader, reason)
	dm.Header.Set(DeadOfHeader, "job")
	if _, err := c.q.js.PublishMsg(ctx, dm, jetstream.WithMsgID(j.ID)); err != nil {
		c.retryLater(m, "jobs: dead letter publish", "job", j.ID, "err", err)
		return
	}
	r := Result{JobID: j.ID, Kind: j.Kind, Capability: j.Capability, Dead: true, Error: reason,
		Deliveries: a.Deliveries, Finished: time.Now().UTC()}
	if err := c.store(ctx, r); err != nil {
		if !IsPermanent(err) {
			c.retryLater(m, "jobs: store dead letter", "job", j.ID, "err", err)
			return
		}
		// The job is on the dead-letter subject already; the store will
		// never take its record: remove it from the queue all the same.
		c.log.Error("jobs: dead letter not recorded: the store refused it for good", "job", j.ID, "kind", j.Kind, "err", err)
		if err := raw.DeleteMsg(ctx, a.StreamSeq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			c.log.Warn("jobs: remove dead job", "job", j.ID, "err", err)
		}
		_ = m.Term()
		return
	}
	if err := raw.DeleteMsg(ctx, a.StreamSeq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		c.log.Warn("jobs: remove dead job", "job", j.ID, "err", err)
	}
	c.log.Warn("jobs: job dead-lettered", "job", j.ID, "kind", j.Kind, "deliveries", a.Deliveries)
	_ = m.DoubleAck(ctx)
}

// WorkerInfo is what a worker's last heartbeat said.
type WorkerInfo struct {
	ID           string    `json:"id"`
	Host         string    `json:"host"`
	Capabilities []string  `json:"capabilities"`
	Running      int       `json:"running"`
	Done         int       `json:"done"`
	Draining     bool      `json:"draining"`
	Started      time.Time `json:"started"`
	LastSeen     time.Time `json:"last_seen"`
	// Stale: no heartbeat for three intervals; it is presumed gone.
	Stale bool `json:"stale"`
	// Interval is the worker's heartbeat period.
	Interval time.Duration `json:"interval_ns"`
	// HostInfo is what the worker advertises of its host (GPUs,
	// toolchains, lanes).
	HostInfo
}

func (c *Collector) heartbeat(m *nats.Msg) {
	var w WorkerInfo
	if err := json.Unmarshal(m.Data, &w); err != nil || w.ID == "" {
		return
	}
	w.LastSeen = time.Now().UTC()
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.Draining && w.Running == 0 && strings.HasSuffix(m.Subject, ".gone") {
		delete(c.workers, w.ID)
		return
	}
	c.workers[w.ID] = w
}

// Workers lists the workers heard from, by id; those silent for three
// heartbeats are marked stale, and dropped after ten.
func (c *Collector) Workers() []WorkerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	out := make([]WorkerInfo, 0, len(c.workers))
	for id, w := range c.workers {
		silent := now.Sub(w.LastSeen)
		if silent > 10*w.Interval {
			delete(c.workers, id)
			continue
		}
		w.Stale = silent > 3*w.Interval
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
