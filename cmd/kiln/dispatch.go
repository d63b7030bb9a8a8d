package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/runs/web"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// dispatchConfig is kiln serve --dispatch: the scale-out queue of the
// daemon (runs/jobs).
type dispatchConfig struct {
	// URL is an external NATS server or cluster; "" embeds one in the
	// daemon (JetStream's store under the data folder).
	URL string
	// Creds is a NATS credentials file for URL.
	Creds string
	// NKey is a file with the daemon's nkey seed for URL (a kiln nats-node
	// lists its public key with --daemon-nkeys).
	NKey string
	// CAFile is the CA certificate of URL's TLS certificate; CertFile and
	// KeyFile are a client certificate for mutual TLS.
	CAFile, CertFile, KeyFile string
	// Host and Port are the embedded server's listen address (Port -1: a
	// free one); anything but loopback needs TLS and WorkerNKeys.
	Host string
	Port int
	// TLS, TLSCert, TLSKey and ClientCA are the embedded server's TLS
	// settings (jobs.ServerConfig).
	TLS, TLSCert, TLSKey, ClientCA string
	// WorkerNKeys are the public nkeys of the workers the embedded server
	// lets in; empty: no authentication (loopback only).
	WorkerNKeys []string
	// Interval is how often pending verdicts are looked for.
	Interval time.Duration
	// Retries is how many times a verdict whose complete job failed (or
	// was dead-lettered) is sent again, each try a new job; 0: never.
	Retries int
	// RetryAfter is the backoff before the first retry; it doubles with
	// each try.
	RetryAfter time.Duration
	// Queue are the queue's delivery settings.
	Queue jobs.QueueConfig
}

// Validate reports a configuration dispatch cannot start with.
func (c dispatchConfig) Validate() error {
	switch {
	case c.URL != "" && len(c.WorkerNKeys) > 0:
		return errors.New("--worker-nkeys configures the embedded NATS server: an external one (--nats) does its own authentication")
	case c.URL == "" && (c.Creds != "" || c.NKey != "" || c.CAFile != "" || c.CertFile != ""):
		return errors.New("--nats-creds, --nats-nkey, --nats-ca and --nats-cert are for an external server: they need --nats")
	case c.URL != "" && (c.TLS != "" || c.TLSCert != "" || c.ClientCA != "" || c.Host != ""):
		return errors.New("--nats-host and --nats-tls* configure the embedded NATS server: an external one (--nats) has its own")
	case (c.CertFile == "") != (c.KeyFile == ""):
		return errors.New("--nats-cert and --nats-key go together")
	case c.URL == "" && c.Queue.Replicas > 1:
		return fmt.Errorf("--nats-replicas %d: the embedded NATS server is a single node: it holds 1 replica (a 3-node cluster of kiln nats-node wants 3)", c.Queue.Replicas)
	case c.Interval <= 0:
		return fmt.Errorf("--dispatch-interval %s must be positive", c.Interval)
	case c.Queue.AckWait != 0 && c.Queue.AckWait < time.Second:
		return fmt.Errorf("--dispatch-ack-wait %s: at least 1s", c.Queue.AckWait)
	case c.Retries < 0 || c.Retries > 20:
		return fmt.Errorf("--dispatch-retries %d must be 0 to 20", c.Retries)
	case c.Retries > 0 && c.RetryAfter <= 0:
		return fmt.Errorf("--dispatch-retry-after %s must be positive", c.RetryAfter)
	}
	return nil
}

// readNKeys reads public nkeys, one a line; blank lines and # comments are
// skipped.
func readNKeys(path string) ([]string, error) { return readKeyList("--worker-nkeys", path) }

// dispatcher is the daemon's side of the scale-out queue, as kiln serve
// --dispatch runs it: the embedded NATS server (or a connection to an
// external one), the queue, the collector that stores results, and a
// scanner that publishes pending verdicts as "complete" jobs of their
// lane's capability (kit.Kit.Capability). A verdict is pending only where
// this host lacked what its stage needs, so every pending verdict of a
// lane with a capability is sent.
type dispatcher struct {
	cfg  dispatchConfig
	data string
	st   *runs.Store
	w    *wiring
	log  *slog.Logger

	srv    *jobs.Server // nil with an external server
	nc     *nats.Conn
	q      *jobs.Queue
	col    *jobs.Collector
	labels engine.Labels

	// published are the jobs this daemon has published (scanner only):
	// they are not published again while it lives. After a restart the
	// duplicate window, or the store's job id, drops a second copy.
	published map[string]bool
	limits    map[string]sandboxes.Limits // by campaign id (scanner only)
	// exhausted are the verdicts whose every try failed, logged once in
	// this daemon's life (scanner only).
	exhausted map[string]bool

	viewMu  sync.Mutex
	retries []web.Retry // the failed jobs' retries, as the last scan saw them
	scanned time.Time

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	stopped bool
}

func newDispatcher(cfg dispatchConfig, data string, st *runs.Store, w *wiring, log *slog.Logger) *dispatcher {
	return &dispatcher{cfg: cfg, data: data, st: st, w: w, log: log.With("part", "dispatch"),
		published: map[string]bool{}, limits: map[string]sandboxes.Limits{}, exhausted: map[string]bool{}}
}

// Start starts the embedded server (or connects to the external one), the
// queue, the collector and the scanner; on error, what it started is
// stopped.
func (d *dispatcher) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			_ = d.Stop(context.Background())
		}
	}()
	reg, err := d.w.lanes()
	if err != nil {
		return err
	}
	d.labels = engine.Labels{Labeler: reg.Rules().Labeler()}
	conn := jobs.ConnConfig{URL: d.cfg.URL, Name: "kiln serve", CredsFile: d.cfg.Creds, NKeySeedFile: d.cfg.NKey,
		CAFile: d.cfg.CAFile, CertFile: d.cfg.CertFile, KeyFile: d.cfg.KeyFile}
	if d.cfg.URL == "" {
		scfg := d.serverConfig()
		if err := serverConfigError(scfg, "--nats-host/--nats-port", "--nats-tls", "--nats-tls-cert/--nats-tls-key", "--nats-tls-cert", "--worker-nkeys"); err != nil {
			return err
		}
		if d.srv, err = jobs.StartServer(scfg); err != nil {
			return err
		}
		conn.URL, conn.Options = d.srv.URL(), d.srv.ClientOptions()
		if ca := d.srv.CAFile(); ca != "" {
			d.log.Info("dispatch: the NATS listener uses TLS with a generated certificate: workers need its CA (kiln worker --nats-ca FILE)",
				"url", d.srv.URL(), "ca", ca)
		}
	}
	if d.nc, err = natsConnect(conn); err != nil {
		return err
	}
	if d.q, err = jobs.NewQueue(ctx, d.nc, d.cfg.Queue); err != nil {
		return err
	}
	d.col = jobs.NewCollector(d.q, d.nc, d.store, d.log)
	if err := d.col.Start(ctx); err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.mu.Lock()
	d.cancel, d.done = cancel, make(chan struct{})
	d.mu.Unlock()
	go d.scanLoop(sctx)
	return nil
}

// serverConfig is the embedded NATS server's configuration.
func (d *dispatcher) serverConfig() jobs.ServerConfig {
	return jobs.ServerConfig{StoreDir: filepath.Join(d.data, "nats"), Host: d.cfg.Host, Port: d.cfg.Port,
		WorkerNKeys: d.cfg.WorkerNKeys, TLS: d.cfg.TLS, TLSCert: d.cfg.TLSCert, TLSKey: d.cfg.TLSKey, ClientCA: d.cfg.ClientCA}
}

// URL is the queue's NATS URL (the embedded server's, or --nats).
func (d *dispatcher) URL() string {
	if d.srv != nil {
		return d.srv.URL()
	}
	return d.cfg.URL
}

// Workers lists the workers heard from (GET /v1/workers).
func (d *dispatcher) Workers() any { return d.col.Workers() }

var _ web.Dispatch = (*dispatcher)(nil)

// DispatchStatus reports the queue (the dashboard's /workers, GET
// /v1/queue): the workers, each capability's jobs from the streams, the
// job results from the store, and the failed jobs' retries as the last
// scan saw them.
func (d *dispatcher) DispatchStatus(ctx context.Context) (web.DispatchStatus, error) {
	s := web.DispatchStatus{URL: d.URL(), Workers: []jobs.WorkerInfo{}, Queues: []jobs.CapabilityStats{},
		Retries: []web.Retry{}, Failures: []web.JobFailure{}, RetryAfter: d.cfg.RetryAfter, MaxRetries: d.cfg.Retries}
	if d.col == nil || d.q == nil {
		return s, errors.New("dispatch is not started")
	}
	s.Workers = d.col.Workers()
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	qs, err := d.q.Stats(qctx)
	cancel()
	if err != nil {
		s.QueueError = err.Error()
	} else {
		s.Queues = qs
	}
	counts, err := d.st.JobResultCounts(ctx)
	if err != nil {
		return s, err
	}
	s.Results = web.JobCounts{Done: counts[runs.JobDone], Failed: counts[runs.JobFailed], Dead: counts[runs.JobDead]}
	fails, err := d.st.LatestJobFailures(ctx, 20)
	if err != nil {
		return s, err
	}
	for _, f := range fails {
		s.Failures = append(s.Failures, web.FailureOf(f))
	}
	d.viewMu.Lock()
	s.Retries = append(s.Retries, d.retries...)
	s.Scanned = d.scanned
	d.viewMu.Unlock()
	for _, r := range s.Retries {
		if r.State == web.RetryExhausted {
			s.Results.RetriesExhausted++
		} else {
			s.Results.RetriesWaiting++
		}
	}
	return s, nil
}

// Stop stops the scanner, then the collector (the result in hand is
// stored and acked, or left for the next start), then the connection and
// the embedded server (JetStream's state is on disk). Idempotent; call it
// after the daemon has stopped.
func (d *dispatcher) Stop(ctx context.Context) error {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return nil
	}
	d.stopped = true
	cancel, done := d.cancel, d.done
	d.mu.Unlock()
	var errs []error
	if cancel != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("dispatch: scanner: %w", ctx.Err()))
		}
	}
	if d.col != nil {
		if err := d.col.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("dispatch: collector: %w", err))
		}
	}
	if d.nc != nil {
		d.nc.Close()
	}
	if d.srv != nil {
		d.srv.Stop()
	}
	return errors.Join(errs...)
}

func (d *dispatcher) scanLoop(ctx context.Context) {
	defer close(d.done)
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		if n, err := d.scan(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("dispatch: scan pending verdicts", "err", err)
		} else if n > 0 {
			d.log.Info("dispatch: pending verdicts sent to workers", "jobs", n)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// scan publishes a complete job for each pending verdict not yet sent, and
// a retry for each whose last try failed and whose backoff has passed; it
// returns how many jobs it published.
func (d *dispatcher) scan(ctx context.Context) (int, error) {
	camps, err := d.st.ListCampaigns(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var (
		errs    []error
		retries []web.Retry
	)
	now := time.Now()
	defer func() {
		if ctx.Err() == nil {
			d.viewMu.Lock()
			d.retries, d.scanned = retries, now
			d.viewMu.Unlock()
		}
	}()
	for _, camp := range camps {
		k, err := d.w.kit(camp.Lane)
		if err != nil || k.Capability == "" {
			continue // a lane this build lacks, or one that leaves nothing pending
		}
		lim, ok := d.limits[camp.ID]
		if !ok {
			sp, err := storedSpec(camp, false)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			lim = specLimits(sp.Sandbox)
			d.limits[camp.ID] = lim
		}
		cjs, err := engine.PendingCompletions(ctx, d.st, camp.ID, lim, d.q.Artifacts(), func(verdictID string) bool {
			return d.published[engine.CompleteJobPrefix+verdictID]
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("campaign %s: %w", camp.ID, err))
			continue
		}
		for _, cj := range cjs {
			if err := d.publish(ctx, k, cj, 1); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
		rn, err := d.scanRetries(ctx, camp, k, lim, now, &retries)
		n += rn
		if err != nil {
			errs = append(errs, fmt.Errorf("campaign %s: retries: %w", camp.ID, err))
		}
	}
	return n, errors.Join(errs...)
}

// retryPolicy is how a verdict whose complete job failed is sent again.
type retryPolicy struct {
	// Retries is how many tries follow the first (0: none).
	Retries int
	// After is the backoff before the first retry, doubled for each
	// further one.
	After time.Duration
}

// retryPlan is what comes next for a pending verdict whose job failed.
type retryPlan struct {
	// State: web.RetryWaiting (Try goes at Due), web.RetryExhausted (no
	// try left), "due" (Try goes now), "" (nothing: no try failed, or
	// one finished).
	State string
	// Try is the next try's number (from 2); Failed how many tries failed.
	Try, Failed int
	Due         time.Time
	// Last is the latest try's result.
	Last runs.JobResult
}

const retryDue = "due"

// planRetry works out the next try of a pending verdict from the stored
// results of its tries (job ids engine.CompleteJobID(verdictID, n)) and
// the time: try n+1 goes After*2^(n-1) after try n's failure was stored,
// while n <= p.Retries. It depends on the stored rows alone, so that a
// daemon restart neither resets the count nor repeats a try.
func planRetry(verdictID string, results []runs.JobResult, p retryPolicy, now time.Time) retryPlan {
	var plan retryPlan
	last := 0
	for _, r := range results {
		vid, try, ok := engine.CompleteJobTry(r.JobID)
		if !ok || vid != verdictID {
			continue
		}
		if r.Status == runs.JobDone {
			return retryPlan{Last: r} // a try finished: nothing to retry
		}
		plan.Failed++
		if try > last {
			last, plan.Last = try, r
		}
	}
	if last == 0 {
		return retryPlan{}
	}
	plan.Try = last + 1
	if last > p.Retries {
		plan.State = web.RetryExhausted
		return plan
	}
	backoff := p.After
	for i := 1; i < last && backoff < 30*24*time.Hour; i++ {
		backoff *= 2
	}
	plan.Due = plan.Last.CreatedAt.Add(backoff)
	if now.Before(plan.Due) {
		plan.State = web.RetryWaiting
	} else {
		plan.State = retryDue
	}
	return plan
}

// scanRetries publishes the next try of each of the campaign's pending
// verdicts whose last try failed once its backoff has passed, under a new
// job id, and adds what it saw to view. It returns how many it published.
func (d *dispatcher) scanRetries(ctx context.Context, camp runs.Campaign, k *kit.Kit, lim sandboxes.Limits, now time.Time,
	view *[]web.Retry) (int, error) {
	rs, err := d.st.TriedPendingResults(ctx, camp.ID, engine.CompleteJobPrefix)
	if err != nil {
		return 0, err
	}
	policy := retryPolicy{Retries: d.cfg.Retries, After: d.cfg.RetryAfter}
	n := 0
	var errs []error
	for _, r := range rs {
		jrs, err := d.st.JobResultsWithPrefix(ctx, engine.CompleteJobPrefix+r.Verdict.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plan := planRetry(r.Verdict.ID, jrs, policy, now)
		if plan.State == "" {
			continue
		}
		row := web.Retry{Campaign: camp.ID, TaskKey: r.Task.Key, AttemptID: r.Attempt.ID, VerdictID: r.Verdict.ID,
			Capability: k.Capability, Tries: plan.Failed, State: plan.State, LastJob: plan.Last.JobID,
			LastStatus: plan.Last.Status, LastWorker: plan.Last.Worker, LastReason: plan.Last.Reason, LastAt: plan.Last.CreatedAt}
		switch plan.State {
		case web.RetryExhausted:
			if !d.exhausted[r.Verdict.ID] {
				d.exhausted[r.Verdict.ID] = true
				d.log.Warn("dispatch: pending verdict not completed: every try failed; finish it by hand with "+
					"`kiln rescore --pending "+camp.ID+"` on a host with "+k.Capability+" (same --data), "+
					"or raise --dispatch-retries and restart",
					"campaign", camp.ID, "task", r.Task.Key, "verdict", r.Verdict.ID, "tries", plan.Failed,
					"last_job", plan.Last.JobID, "reason", plan.Last.Reason)
			}
		case web.RetryWaiting:
			row.NextJob, row.NextAt = engine.CompleteJobID(r.Verdict.ID, plan.Try), plan.Due
		case retryDue:
			id := engine.CompleteJobID(r.Verdict.ID, plan.Try)
			row.State, row.NextJob, row.NextAt = web.RetrySent, id, plan.Due
			if d.published[id] {
				break // sent in this daemon's life: its result is not back yet
			}
			cj, ok, err := engine.CompletionOf(ctx, d.st, camp.ID, r, lim, d.q.Artifacts())
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok {
				continue
			}
			if err := d.publish(ctx, k, cj, plan.Try); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
			d.log.Info("dispatch: failed job sent again", "job", id, "try", plan.Try, "of", policy.Retries+1,
				"task", r.Task.Key, "last_job", plan.Last.JobID, "last_status", plan.Last.Status, "reason", plan.Last.Reason)
		}
		*view = append(*view, row)
	}
	return n, errors.Join(errs...)
}

// publish publishes try (from 1) of the job completing cj's verdict.
func (d *dispatcher) publish(ctx context.Context, k *kit.Kit, cj engine.CompleteJob, try int) error {
	b, err := json.Marshal(cj)
	if err != nil {
		return fmt.Errorf("complete job %s: %w", cj.VerdictID, err)
	}
	id := engine.CompleteJobID(cj.VerdictID, try)
	capability := jobCapability(k, cj.Item)
	if _, err := d.q.Publish(ctx, jobs.Job{ID: id, Kind: completeJobKind, Capability: capability, Payload: b}); err != nil {
		return err
	}
	d.published[id] = true
	d.log.Debug("dispatch: published", "job", id, "lane", k.Name, "capability", capability, "task", cj.TaskKey)
	return nil
}

// store is the collector's StoreFunc: a finished complete job becomes the
// attempt's next verdict revision (with its job result, in one
// transaction); any other result (a failed or dead job, another kind) is
// recorded as a job result with its reason. Idempotent by job id.
func (d *dispatcher) store(ctx context.Context, r jobs.Result) error {
	rec := jobResultRecord(r)
	if r.Kind != completeJobKind || !r.OK {
		if _, err := d.st.RecordJob(ctx, rec); err != nil {
			return err
		}
		if !r.OK {
			d.log.Warn("dispatch: job failed", "job", r.JobID, "kind", r.Kind, "worker", r.Worker, "dead", r.Dead,
				"deliveries", r.Deliveries, "reason", r.Error)
		}
		return nil
	}
	var out engine.CompleteOutput
	if err := json.Unmarshal(r.Payload, &out); err != nil || out.AttemptID == "" || out.VerdictID == "" {
		// Retrying cannot cure it: record why and move on.
		rec.Status, rec.Reason = runs.JobFailed, fmt.Sprintf("malformed complete output from worker %s: %v", r.Worker, err)
		_, err := d.st.RecordJob(ctx, rec)
		return err
	}
	if _, err := d.st.JobResultOf(ctx, r.JobID); err == nil {
		return nil // a duplicate: the job has its result
	} else if !errors.Is(err, runs.ErrNotFound) {
		return err
	}
	// The verdict the job completed must still be its attempt's latest
	// revision: a late result of an older try, after another try (or
	// kiln rescore --pending) completed it, is recorded and makes no
	// second revision.
	vs, err := d.st.Verdicts(ctx, out.AttemptID)
	if err != nil {
		return err
	}
	idx := slices.IndexFunc(vs, func(v runs.Verdict) bool { return v.ID == out.VerdictID })
	if idx < 0 {
		// Its attempt or its campaign was deleted: storing it again later
		// cannot succeed.
		return jobs.Permanent(fmt.Errorf("store job %s: attempt %s has no verdict %s (deleted?)", r.JobID, out.AttemptID, out.VerdictID))
	}
	if latest := vs[len(vs)-1]; latest.ID != out.VerdictID {
		rec.Reason = fmt.Sprintf("superseded: verdict %s was already followed by revision %d (%s); this result made no revision",
			out.VerdictID, latest.Revision, latest.ID)
		if _, err := d.st.RecordJob(ctx, rec); err != nil {
			return err
		}
		d.log.Info("dispatch: late result of a completed verdict recorded without a revision", "job", r.JobID,
			"worker", r.Worker, "verdict", out.VerdictID, "latest", latest.ID)
		return nil
	}
	rec.Result = nil // the revision holds it
	policy := out.Policy
	if policy == "" {
		policy = "worker " + r.Worker + " (isolation not reported)"
	}
	stored, err := engine.StoreCompletion(ctx, d.st, d.labels, out, rec, d.q.Artifacts(), policy, d.log)
	if errors.Is(err, runs.ErrNotFound) {
		return jobs.Permanent(fmt.Errorf("store job %s: %w", r.JobID, err))
	}
	if err != nil {
		return err
	}
	if stored {
		d.log.Info("dispatch: pending verdict completed", "job", r.JobID, "worker", r.Worker, "pass", out.Verdict.Pass,
			"class", out.Verdict.Class)
	}
	return nil
}

// specLimits are the sandbox limits of a spec's sandbox section.
func specLimits(sb spec.Sandbox) sandboxes.Limits {
	return sandboxes.Limits{
		Wall: sb.WallTime.D(), CPU: sb.CPUTime.D(), Memory: int64(sb.MemoryMB) << 20,
		Procs: int64(sb.Processes), Output: int64(sb.OutputKB) << 10, FileSize: int64(sb.FileSizeMB) << 20,
	}
}

// jobCapability is the capability a pending item's completion needs: the
// lane's, or the item's own where the kit says (kit.Kit.ItemCapability).
func jobCapability(k *kit.Kit, item tools.Item) string {
	if k.ItemCapability != nil {
		if c := k.ItemCapability(item); c != "" {
			return c
		}
	}
	return k.Capability
}
