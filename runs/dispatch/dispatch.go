// Package dispatch is the daemon's side of the scale-out queue (kiln serve
// --dispatch): the embedded NATS server or a connection to an external one,
// the queue (runs/jobs), the collector that stores the workers' results as
// verdict revisions, and the scanner that publishes pending verdicts as
// complete jobs of their lane's capability, with retries and backoff.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/runs/web"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Config is kiln serve --dispatch: the scale-out queue of the daemon
// (runs/jobs). Its errors name kiln serve's flags.
type Config struct {
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
func (c Config) Validate() error {
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

// Dispatcher is the daemon's side of the scale-out queue, as kiln serve
// --dispatch runs it: the embedded NATS server (or a connection to an
// external one), the queue, the collector that stores results, and a
// scanner that publishes pending verdicts as "complete" jobs of their
// lane's capability (kit.Kit.Capability). A verdict is pending only where
// this host lacked what its stage needs, so every pending verdict of a
// lane with a capability is sent.
type Dispatcher struct {
	cfg  Config
	data string
	st   *runs.Store
	deps Deps
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

// Deps are what the dispatcher needs of the program that runs it.
type Deps struct {
	// Lanes are the lane kits of this build.
	Lanes func() (*kit.Registry, error)
	// Limits are the sandbox limits of a campaign (its stored spec's).
	Limits func(runs.Campaign) (sandboxes.Limits, error)
	// CheckServer validates the embedded server's configuration before
	// it starts; nil: jobs.StartServer's own checks only.
	CheckServer func(jobs.ServerConfig) error
}

// New returns a dispatcher of the queue cfg configures, its embedded
// server's store under data, storing results in st.
func New(cfg Config, data string, st *runs.Store, deps Deps, log *slog.Logger) *Dispatcher {
	return &Dispatcher{cfg: cfg, data: data, st: st, deps: deps, log: log.With("part", "dispatch"),
		published: map[string]bool{}, limits: map[string]sandboxes.Limits{}, exhausted: map[string]bool{}}
}

// Start starts the embedded server (or connects to the external one), the
// queue, the collector and the scanner; on error, what it started is
// stopped.
func (d *Dispatcher) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			_ = d.Stop(context.Background())
		}
	}()
	reg, err := d.deps.Lanes()
	if err != nil {
		return err
	}
	d.labels = engine.Labels{Labeler: reg.Rules().Labeler()}
	conn := jobs.ConnConfig{URL: d.cfg.URL, Name: "kiln serve", CredsFile: d.cfg.Creds, NKeySeedFile: d.cfg.NKey,
		CAFile: d.cfg.CAFile, CertFile: d.cfg.CertFile, KeyFile: d.cfg.KeyFile}
	if d.cfg.URL == "" {
		scfg := d.serverConfig()
		if d.deps.CheckServer != nil {
			if err := d.deps.CheckServer(scfg); err != nil {
				return err
			}
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
	if d.nc, err = Connect(conn); err != nil {
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
func (d *Dispatcher) serverConfig() jobs.ServerConfig {
	return jobs.ServerConfig{StoreDir: filepath.Join(d.data, "nats"), Host: d.cfg.Host, Port: d.cfg.Port,
		WorkerNKeys: d.cfg.WorkerNKeys, TLS: d.cfg.TLS, TLSCert: d.cfg.TLSCert, TLSKey: d.cfg.TLSKey, ClientCA: d.cfg.ClientCA}
}

// URL is the queue's NATS URL (the embedded server's, or --nats).
func (d *Dispatcher) URL() string {
	if d.srv != nil {
		return d.srv.URL()
	}
	return d.cfg.URL
}

// Workers lists the workers heard from (GET /v1/workers).
func (d *Dispatcher) Workers() any { return d.col.Workers() }

var _ web.Dispatch = (*Dispatcher)(nil)

// DispatchStatus reports the queue (the dashboard's /workers, GET
// /v1/queue): the workers, each capability's jobs from the streams, the
// job results from the store, and the failed jobs' retries as the last
// scan saw them.
func (d *Dispatcher) DispatchStatus(ctx context.Context) (web.DispatchStatus, error) {
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
func (d *Dispatcher) Stop(ctx context.Context) error {
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

// kit returns the kit of lane.
func (d *Dispatcher) kit(lane string) (*kit.Kit, error) {
	r, err := d.deps.Lanes()
	if err != nil {
		return nil, err
	}
	return r.Lookup(lane)
}

// Connect connects to NATS (jobs.Connect) and says which flag is missing
// when the server's certificate is not trusted.
func Connect(cfg jobs.ConnConfig) (*nats.Conn, error) {
	nc, err := jobs.Connect(cfg)
	if errors.Is(err, jobs.ErrTLSUntrusted) {
		return nil, fmt.Errorf("%w; pass it with --nats-ca FILE (a server with a generated certificate logs the path: <store>/tls/%s on a nats-node, <data>/nats/tls/%s for kiln serve --dispatch)",
			err, jobs.CACertFile, jobs.CACertFile)
	}
	return nc, err
}
