package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Handler runs one job on a worker and returns its output. An error
// wrapped with Permanent fails the job for good (the failure is the
// result); any other error is retried on a later delivery, until the
// last, where it becomes the failure. ctx is cancelled on a hard stop.
type Handler func(ctx context.Context, j Job, art *Artifacts) (json.RawMessage, error)

// ErrPermanent marks an error that retrying will not cure:
// errors.Is(err, ErrPermanent) holds for an error made by Permanent or one
// that wraps ErrPermanent itself (fmt.Errorf("...: %w", ErrPermanent)).
var ErrPermanent = errors.New("permanent")

type permanentError struct{ err error }

func (e permanentError) Error() string        { return e.err.Error() }
func (e permanentError) Unwrap() error        { return e.err }
func (e permanentError) Is(target error) bool { return target == ErrPermanent }

// Permanent marks an error that retrying will not cure: a handler's (a bad
// payload, an answer the lane cannot judge: the failure is the job's
// result) or a StoreFunc's (the result refers to what no longer exists:
// the collector dead-letters it instead of offering it again).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked with Permanent (or wraps
// ErrPermanent).
func IsPermanent(err error) bool { return errors.Is(err, ErrPermanent) }

// WorkerConfig configures a worker.
type WorkerConfig struct {
	// ID names the worker in heartbeats and results (one subject token:
	// no dots or spaces). Default host-pid.
	ID string
	// Capabilities are the capabilities it pulls jobs of.
	Capabilities []string
	// Handlers run jobs by kind; a job of another kind fails.
	Handlers map[string]Handler
	// Concurrency is how many jobs of each capability run at once
	// (default 1: one GPU, one job).
	Concurrency int
	// Heartbeat is the heartbeat period (default 2s).
	Heartbeat time.Duration
	// Host is what the worker advertises of its host in every heartbeat
	// (GPUs, toolchains, lanes), for the daemon's worker list.
	Host HostInfo
	Log  *slog.Logger
}

// HostInfo is what a worker says of its host.
type HostInfo struct {
	// GPUs are the GPUs' names, one per device; Driver their driver.
	GPUs   []string `json:"gpus,omitempty"`
	Driver string   `json:"driver,omitempty"`
	// Toolchains are the toolchains found, by name, with their versions.
	Toolchains map[string]string `json:"toolchains,omitempty"`
	// Lanes are the lanes whose pending stages it can complete: their
	// capability is one of its own and their toolchains are present.
	Lanes []string `json:"lanes,omitempty"`
}

// Defaults fills in zero fields.
func (c *WorkerConfig) Defaults() {
	if c.ID == "" {
		h, _ := os.Hostname()
		c.ID = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	c.ID = tokenSafe(c.ID)
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = 2 * time.Second
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Validate reports a configuration a worker cannot run with.
func (c *WorkerConfig) Validate() error {
	if len(c.Capabilities) == 0 {
		return errors.New("worker: no capabilities")
	}
	for _, cp := range c.Capabilities {
		if !ValidCapability(cp) {
			return fmt.Errorf("worker: bad capability %q", cp)
		}
	}
	if len(c.Handlers) == 0 {
		return errors.New("worker: no job handlers")
	}
	if c.Concurrency < 1 {
		return fmt.Errorf("worker: concurrency %d", c.Concurrency)
	}
	return nil
}

func tokenSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Worker pulls jobs of its capabilities, runs them and publishes their
// results; a job is acked only once its result is in the results stream.
type Worker struct {
	nc  *nats.Conn
	cfg WorkerConfig

	js      jetstream.JetStream
	art     *Artifacts
	started time.Time

	mu      sync.Mutex
	running int
	done    int
	soft    context.CancelFunc // stops pulling
	hard    context.CancelFunc // cancels running jobs
	wg      sync.WaitGroup     // pull loops and jobs
	hbDone  chan struct{}
	hbStop  chan struct{}
	stopped bool
}

// NewWorker returns a worker on nc.
func NewWorker(nc *nats.Conn, cfg WorkerConfig) (*Worker, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Worker{nc: nc, cfg: cfg}, nil
}

// ID is the worker's id.
func (w *Worker) ID() string { return w.cfg.ID }

// StartUnless is Start, given up when stop closes while it waits for the
// queue (a worker started before its daemon waits for the artifact store):
// stopped is then true and the error nil.
func (w *Worker) StartUnless(ctx context.Context, stop <-chan struct{}) (stopped bool, err error) {
	startCtx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-startCtx.Done():
		}
	}()
	err = w.Start(startCtx)
	cancel()
	if err != nil {
		select {
		case <-stop:
			return true, nil
		default:
		}
	}
	return false, err
}

// Start binds the artifact store and starts one pull loop per capability
// and the heartbeat; it returns at once. A capability whose consumer does
// not exist yet (no job of it published so far) is bound when it appears.
func (w *Worker) Start(ctx context.Context) error {
	js, err := jetstream.New(w.nc)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	w.js = js
	var art *Artifacts
	for {
		art, err = bindArtifacts(ctx, js)
		if err == nil {
			break
		}
		w.cfg.Log.Info("worker: waiting for the daemon's artifact store", "err", err)
		if sleepCtx(ctx, time.Second); ctx.Err() != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	w.art = art
	w.started = time.Now().UTC()
	base := context.WithoutCancel(ctx)
	softCtx, soft := context.WithCancel(base)
	hardCtx, hard := context.WithCancel(base)
	w.soft, w.hard = soft, hard
	w.hbStop, w.hbDone = make(chan struct{}), make(chan struct{})
	go w.heartbeats()
	for _, cp := range w.cfg.Capabilities {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.pull(softCtx, hardCtx, cp)
		}()
	}
	return nil
}

// Stop drains: it stops pulling, lets the running jobs finish and publish
// their results, then returns. When ctx ends first, the running jobs are
// cancelled and handed back to the queue (Nak) for another worker.
// Idempotent.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	if w.soft == nil || w.stopped {
		w.mu.Unlock()
		return nil
	}
	w.stopped = true
	w.mu.Unlock()
	w.soft()
	drained := make(chan struct{})
	go func() { w.wg.Wait(); close(drained) }()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		w.hard()
		<-drained
		err = ctx.Err()
	}
	w.hard()
	close(w.hbStop)
	<-w.hbDone
	w.beat(HeartbeatPrefix + w.cfg.ID + ".gone")
	_ = w.nc.Flush()
	return err
}

func (w *Worker) info() WorkerInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, _ := os.Hostname()
	return WorkerInfo{ID: w.cfg.ID, Host: h, Capabilities: slices.Clone(w.cfg.Capabilities), Running: w.running,
		Done: w.done, Draining: w.stopped, Started: w.started, Interval: w.cfg.Heartbeat, HostInfo: w.cfg.Host}
}

func (w *Worker) beat(subject string) {
	b, _ := json.Marshal(w.info())
	_ = w.nc.Publish(subject, b)
}

func (w *Worker) heartbeats() {
	defer close(w.hbDone)
	t := time.NewTicker(w.cfg.Heartbeat)
	defer t.Stop()
	for {
		w.beat(HeartbeatPrefix + w.cfg.ID)
		select {
		case <-t.C:
		case <-w.hbStop:
			return
		}
	}
}

// pull runs one capability's loop: up to Concurrency jobs at a time.
func (w *Worker) pull(softCtx, hardCtx context.Context, capability string) {
	log := w.cfg.Log.With("capability", capability)
	var cons jetstream.Consumer
	for softCtx.Err() == nil {
		c, err := w.js.Consumer(softCtx, JobsStream, ConsumerName(capability))
		if err == nil {
			cons = c
			break
		}
		if !errors.Is(err, jetstream.ErrConsumerNotFound) {
			log.Warn("worker: bind consumer", "err", err)
		}
		sleepCtx(softCtx, time.Second)
	}
	if cons == nil {
		return
	}
	info := cons.CachedInfo()
	ackWait, maxDeliver := info.Config.AckWait, info.Config.MaxDeliver
	slots := make(chan struct{}, w.cfg.Concurrency)
	for {
		select {
		case slots <- struct{}{}:
		case <-softCtx.Done():
			return
		}
		fctx, cancel := context.WithTimeout(softCtx, 2*time.Second)
		m, err := cons.Next(jetstream.FetchContext(fctx))
		cancel()
		if err != nil {
			<-slots
			if softCtx.Err() != nil {
				return
			}
			if !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
				log.Warn("worker: pull", "err", err)
				sleepCtx(softCtx, time.Second)
			}
			continue
		}
		if softCtx.Err() != nil {
			_ = m.Nak() // draining: back to the queue at once
			<-slots
			return
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer func() { <-slots }()
			w.handle(hardCtx, m, capability, ackWait, maxDeliver, log)
		}()
	}
}

// handle runs one delivered job and settles it.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg, capability string, ackWait time.Duration, maxDeliver int, log *slog.Logger) {
	deliveries := 1
	if md, err := m.Metadata(); err == nil {
		deliveries = int(md.NumDelivered)
	}
	var j Job
	if err := json.Unmarshal(m.Data(), &j); err != nil || j.ID == "" {
		log.Error("worker: malformed job dropped", "err", err)
		_ = m.TermWithReason("malformed job")
		return
	}
	log = log.With("job", j.ID, "kind", j.Kind, "delivery", deliveries)
	w.mu.Lock()
	w.running++
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.running--
		w.done++
		w.mu.Unlock()
	}()
	r := Result{JobID: j.ID, Kind: j.Kind, Capability: capability, Worker: w.cfg.ID, Deliveries: deliveries,
		Started: time.Now().UTC()}
	h := w.cfg.Handlers[j.Kind]
	var (
		out json.RawMessage
		err error
	)
	if h == nil {
		err = Permanent(fmt.Errorf("worker %s has no handler for job kind %q", w.cfg.ID, j.Kind))
	} else {
		// In-progress acks keep a long job from being redelivered while
		// this worker lives; when it dies they stop and AckWait runs out.
		stop := make(chan struct{})
		var hb sync.WaitGroup
		hb.Add(1)
		go func() {
			defer hb.Done()
			t := time.NewTicker(max(ackWait/3, 50*time.Millisecond))
			defer t.Stop()
			for {
				select {
				case <-t.C:
					_ = m.InProgress()
				case <-stop:
					return
				}
			}
		}()
		out, err = h(ctx, j, w.art)
		close(stop)
		hb.Wait()
	}
	r.Finished = time.Now().UTC()
	switch {
	case err == nil:
		r.OK, r.Payload = true, out
	case ctx.Err() != nil:
		// Hard stop: not this job's fault; another worker takes it.
		log.Info("worker: job cancelled, handed back", "err", err)
		_ = m.Nak()
		return
	case IsPermanent(err) || (maxDeliver > 0 && deliveries >= maxDeliver):
		r.Error = err.Error()
	default:
		log.Warn("worker: job failed, will be retried", "err", err)
		_ = m.NakWithDelay(min(time.Duration(deliveries)*time.Second, 30*time.Second))
		return
	}
	b, merr := json.Marshal(r)
	if merr != nil {
		log.Error("worker: encode result", "err", merr)
		_ = m.Nak()
		return
	}
	// The result is in the results stream before the job is acked: a
	// crash between the two redelivers the job, and its second result is
	// dropped (same message id here, same job id in the store).
	// On a cluster a node may be down or a leader being elected: both are
	// retried for a while (the same message id makes a second copy of the
	// result a duplicate; a job never acked is redelivered).
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err = retry(pctx, time.Minute, func(tctx context.Context) error {
		_, err := w.js.Publish(tctx, ResultsPrefix+tokenSafe(j.Kind), b, jetstream.WithMsgID(j.ID))
		return err
	})
	if err != nil {
		log.Error("worker: publish result", "err", err)
		_ = m.Nak()
		return
	}
	if err := retry(pctx, time.Minute, m.DoubleAck); err != nil {
		log.Warn("worker: ack job", "err", err)
	}
}
