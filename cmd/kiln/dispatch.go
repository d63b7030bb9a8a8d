package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kiln-dev/kiln/cmd/kiln/internal/spec"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/sandboxes"
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
	// Port is the embedded server's loopback port (-1: a free one).
	Port int
	// WorkerNKeys are the public nkeys of the workers the embedded server
	// lets in; empty: no authentication (loopback only).
	WorkerNKeys []string
	// Interval is how often pending verdicts are looked for.
	Interval time.Duration
	// Queue are the queue's delivery settings.
	Queue jobs.QueueConfig
}

// Validate reports a configuration dispatch cannot start with.
func (c dispatchConfig) Validate() error {
	switch {
	case c.URL != "" && len(c.WorkerNKeys) > 0:
		return errors.New("--worker-nkeys configures the embedded NATS server: an external one (--nats) does its own authentication")
	case c.URL == "" && c.Creds != "":
		return errors.New("--nats-creds needs --nats")
	case c.Interval <= 0:
		return fmt.Errorf("--dispatch-interval %s must be positive", c.Interval)
	}
	return nil
}

// readNKeys reads public nkeys, one a line; blank lines and # comments are
// skipped.
func readNKeys(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--worker-nkeys: %w", err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--worker-nkeys: %s lists no key", path)
	}
	return out, nil
}

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

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	stopped bool
}

func newDispatcher(cfg dispatchConfig, data string, st *runs.Store, w *wiring, log *slog.Logger) *dispatcher {
	return &dispatcher{cfg: cfg, data: data, st: st, w: w, log: log.With("part", "dispatch"),
		published: map[string]bool{}, limits: map[string]sandboxes.Limits{}}
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
	conn := jobs.ConnConfig{URL: d.cfg.URL, Name: "kiln serve", CredsFile: d.cfg.Creds}
	if d.cfg.URL == "" {
		d.srv, err = jobs.StartServer(jobs.ServerConfig{StoreDir: filepath.Join(d.data, "nats"), Port: d.cfg.Port,
			WorkerNKeys: d.cfg.WorkerNKeys})
		if err != nil {
			return err
		}
		conn.URL, conn.Options = d.srv.URL(), d.srv.ClientOptions()
	}
	if d.nc, err = jobs.Connect(conn); err != nil {
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

// URL is the queue's NATS URL (the embedded server's, or --nats).
func (d *dispatcher) URL() string {
	if d.srv != nil {
		return d.srv.URL()
	}
	return d.cfg.URL
}

// Workers lists the workers heard from (GET /v1/workers).
func (d *dispatcher) Workers() any { return d.col.Workers() }

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
// returns how many it published.
func (d *dispatcher) scan(ctx context.Context) (int, error) {
	camps, err := d.st.ListCampaigns(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
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
			if err := d.publish(ctx, k, cj); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}

func (d *dispatcher) publish(ctx context.Context, k *kit.Kit, cj engine.CompleteJob) error {
	b, err := json.Marshal(cj)
	if err != nil {
		return fmt.Errorf("complete job %s: %w", cj.VerdictID, err)
	}
	id := engine.CompleteJobPrefix + cj.VerdictID
	if _, err := d.q.Publish(ctx, jobs.Job{ID: id, Kind: completeJobKind, Capability: k.Capability, Payload: b}); err != nil {
		return err
	}
	d.published[id] = true
	d.log.Debug("dispatch: published", "job", id, "lane", k.Name, "capability", k.Capability, "task", cj.TaskKey)
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
	rec.Result = nil // the revision holds it
	policy := out.Policy
	if policy == "" {
		policy = "worker " + r.Worker + " (isolation not reported)"
	}
	stored, err := engine.StoreCompletion(ctx, d.st, d.labels, out, rec, d.q.Artifacts(), policy, d.log)
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
