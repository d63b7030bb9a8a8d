package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/runs/dispatch"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/runs/metrics"
	"github.com/kiln-dev/kiln/runs/notify"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/runs/web"
	"github.com/kiln-dev/kiln/sandboxes"
)

// notifyGrace bounds how long a stopping daemon waits for webhook calls
// still queued.
const notifyGrace = 15 * time.Second

// cmdServe runs the daemon: the HTTP API plus every submitted campaign.
// Campaigns left unfinished by a previous daemon are resumed.
func cmdServe(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	addr := fs.String("addr", "127.0.0.1:7878", "listen address; anything but loopback needs --token-env")
	tokenEnv := fs.String("token-env", "", "name of the environment variable holding the bearer token")
	specRoot := fs.String("spec-root", ".", "folder that relative paths in submitted specs resolve against (they may not leave it)")
	webhookEnv := fs.String("webhook-env", "", "name of the environment variable holding a webhook URL called when a campaign ends or stalls")
	stallAfter := fs.Duration("stall-after", 30*time.Minute, "with --webhook-env: a running campaign with no task judged for this long is reported as stalled (0: never)")
	var df serveDispatchFlags
	df.register(fs)
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	dcfg, err := df.config()
	if err != nil {
		return err
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	cfg, ncfg, err := serveConfigs(*addr, *tokenEnv, *webhookEnv, *stallAfter, log, e)
	if err != nil {
		return err
	}
	root := *specRoot
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return badInput("--spec-root: %s is not a folder", root)
	}
	st, err := c.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	prom := metrics.New(st, log)
	cfg.Metrics = prom.Handler()
	w := c.wiring(e, log, c.data)
	w.metrics = prom
	defer w.close() // after the daemon has stopped: no box is in use then
	if _, err := w.sandbox(); err != nil {
		return err
	}
	d := serveDaemon(ctx, st, w, prom, root)
	// The scale-out queue (--dispatch) starts before the daemon and stops
	// after it; the dashboard shows it on /workers.
	var (
		disp   *dispatch.Dispatcher
		dispUI web.Dispatch
	)
	if df.on {
		disp = dispatch.New(dcfg, c.data, st, dispatchDeps(w), log)
		dispUI = disp
	}
	if cfg.UI, err = serveUI(st, w, d, dispUI); err != nil {
		return err
	}
	if disp != nil {
		if err := disp.Start(ctx); err != nil {
			return err
		}
		defer disp.Stop(context.Background()) // idempotent: a no-op after the ordered stop below
		cfg.Workers = disp.Workers
		cfg.Queue = func(ctx context.Context) (any, error) { return disp.DispatchStatus(ctx) }
		fmt.Fprintf(e.stderr, "kiln: job queue on %s\n", disp.URL())
	}
	srv, err := api.New(cfg, d, log)
	if err != nil {
		return usageError{err}
	}
	notifier, err := notify.New(ncfg, st)
	if err != nil {
		return usageError{err}
	}
	sv := &engine.Serving{API: srv, Daemon: d, Notifier: notifier, Grace: stopGrace, NotifyGrace: notifyGrace}
	if disp != nil {
		sv.Queue = disp
	}
	if err := sv.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "kiln: serving on http://%s (data in %s)\n", srv.Addr(), c.data)
	select {
	case <-e.soft:
	case <-ctx.Done():
	}
	log.Info("stopping: finishing in-flight attempts")
	return sv.Stop(ctx)
}

// serveDispatchFlags are kiln serve's --dispatch flags, bound to the
// dispatcher's configuration.
type serveDispatchFlags struct {
	on          bool
	cfg         dispatch.Config
	workerNKeys string
}

func (d *serveDispatchFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&d.on, "dispatch", false, "scale-out: send pending verdicts (stages this host cannot run: GPU, AMD GPU, torch) as jobs to kiln worker hosts over NATS JetStream, embedded unless --nats is given")
	fs.StringVar(&d.cfg.URL, "nats", "", "with --dispatch: an external NATS server or cluster (comma-separated URLs) instead of the embedded one")
	fs.StringVar(&d.cfg.Creds, "nats-creds", "", "with --nats: NATS credentials file (JWT and seed)")
	fs.IntVar(&d.cfg.Port, "nats-port", 4222, "with --dispatch: the embedded NATS server's port (-1: a free one)")
	fs.StringVar(&d.cfg.Host, "nats-host", "", "with --dispatch: the embedded NATS server's listen address (default 127.0.0.1); anything but loopback needs --worker-nkeys, and uses TLS")
	fs.StringVar(&d.cfg.TLS, "nats-tls", "", "with --dispatch: the embedded NATS server's TLS: auto (default: on when --nats-host is not loopback or --nats-tls-cert is given; a certificate is generated in <data>/nats/tls), on, off (loopback only)")
	fs.StringVar(&d.cfg.TLSCert, "nats-tls-cert", "", "with --dispatch: the embedded NATS server's certificate (PEM) instead of a generated one")
	fs.StringVar(&d.cfg.TLSKey, "nats-tls-key", "", "with --nats-tls-cert: its key (PEM)")
	fs.StringVar(&d.cfg.ClientCA, "nats-tls-client-ca", "", "with --dispatch: mutual TLS on the embedded NATS server: workers must present a certificate this CA signed (kiln worker --nats-cert)")
	fs.StringVar(&d.cfg.NKey, "nats-nkey", "", "with --nats: file with the daemon's nkey seed (SU...), whose public key the nodes list (kiln nats-node --daemon-nkeys)")
	fs.StringVar(&d.cfg.CAFile, "nats-ca", "", "with --nats: CA certificate (PEM) of the servers' TLS certificates (a kiln nats-node's generated one: <store>/tls/ca.pem)")
	fs.StringVar(&d.cfg.CertFile, "nats-cert", "", "with --nats: client certificate (PEM) for servers that want mutual TLS")
	fs.StringVar(&d.cfg.KeyFile, "nats-key", "", "with --nats-cert: its key (PEM)")
	fs.IntVar(&d.cfg.Queue.Replicas, "nats-replicas", 1, "with --dispatch: replicas of the queue's streams: 1 on the embedded server, 3 on a 3-node cluster (kiln nats-node), so that a node may be lost")
	fs.StringVar(&d.workerNKeys, "worker-nkeys", "", "with --dispatch: file of the public nkeys (U..., one a line) of the workers the embedded NATS server lets in; without it, any local process may connect")
	fs.DurationVar(&d.cfg.Interval, "dispatch-interval", 15*time.Second, "with --dispatch: how often pending verdicts are looked for")
	fs.IntVar(&d.cfg.Retries, "dispatch-retries", 3, "with --dispatch: how many times a verdict whose job failed (or was dead-lettered) is sent again, as a new job (0: never)")
	fs.DurationVar(&d.cfg.RetryAfter, "dispatch-retry-after", 5*time.Minute, "with --dispatch: wait before sending a failed job again; doubles with each try")
	fs.DurationVar(&d.cfg.Queue.AckWait, "dispatch-ack-wait", 30*time.Second, "with --dispatch: how long a job may go without word from its worker (workers send in-progress acks every third of it) before it goes to another worker")
}

// config is the dispatcher's configuration the flags give: none without
// --dispatch, where the other dispatch flags are refused.
func (d *serveDispatchFlags) config() (dispatch.Config, error) {
	c := d.cfg
	if !d.on {
		if c.URL != "" || c.Creds != "" || d.workerNKeys != "" || c.Host != "" || c.TLS != "" || c.NKey != "" || c.CAFile != "" {
			return dispatch.Config{}, badInput("--nats, --nats-* and --worker-nkeys need --dispatch")
		}
		return dispatch.Config{}, nil
	}
	if d.workerNKeys != "" {
		keys, err := readKeyList("--worker-nkeys", d.workerNKeys)
		if err != nil {
			return dispatch.Config{}, badInput("%v", err)
		}
		c.WorkerNKeys = keys
	}
	if err := c.Validate(); err != nil {
		return dispatch.Config{}, badInput("%v", err)
	}
	return c, nil
}

// serveConfigs are the API's and the notifier's configurations, the token
// and the webhook URL read from the environment variables named.
func serveConfigs(addr, tokenEnv, webhookEnv string, stallAfter time.Duration, log *slog.Logger, e env) (api.Config, notify.Config, error) {
	token := ""
	if tokenEnv != "" {
		if token = e.getenv(tokenEnv); token == "" {
			return api.Config{}, notify.Config{}, badInput("--token-env: environment variable %s is empty", tokenEnv)
		}
	}
	cfg := api.Config{Addr: addr, Token: token}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return api.Config{}, notify.Config{}, usageError{err}
	}
	ncfg := notify.Config{StallAfter: stallAfter, Log: log}
	if webhookEnv != "" {
		if ncfg.URL = e.getenv(webhookEnv); ncfg.URL == "" {
			return api.Config{}, notify.Config{}, badInput("--webhook-env: environment variable %s is empty", webhookEnv)
		}
	}
	ncfg.Defaults()
	if err := ncfg.Validate(); err != nil {
		return api.Config{}, notify.Config{}, badInput("--webhook-env %s / --stall-after: %v", webhookEnv, err)
	}
	return cfg, ncfg, nil
}

// serveDaemon is the daemon of kiln serve: specs submitted over the API
// are parsed confined to root and planned before they are accepted; stored
// ones are planned again when they run.
func serveDaemon(ctx context.Context, st *runs.Store, w *wiring, prom *metrics.Prometheus, root string) *engine.Daemon {
	return &engine.Daemon{
		Engine: &engine.Engine{Store: st, Log: w.log, Metrics: prom},
		Log:    w.log,
		Prepare: func(data []byte) (runs.Campaign, error) {
			opts := specOptions(root)
			opts.Confine = true
			sp, err := spec.Parse(data, "spec.yaml", opts)
			if err != nil {
				return runs.Campaign{}, &api.BadSpec{Err: err}
			}
			if _, err := w.plan(ctx, sp); err != nil {
				return runs.Campaign{}, &api.BadSpec{Err: err}
			}
			return runs.Campaign{Name: sp.Name, Lane: sp.Lane, Spec: data, SpecDir: sp.Dir}, nil
		},
		Plan: func(ctx context.Context, camp runs.Campaign) (*engine.Plan, error) {
			sp, err := spec.Parse(camp.Spec, camp.Name+".yaml", specOptions(camp.SpecDir))
			if err != nil {
				return nil, fmt.Errorf("stored spec: %w", err)
			}
			return w.plan(ctx, sp)
		},
	}
}

// serveUI is the dashboard: the daemon's campaigns, its refine and export
// buttons, and the queue (dispUI, nil without --dispatch).
func serveUI(st *runs.Store, w *wiring, d *engine.Daemon, dispUI web.Dispatch) (http.Handler, error) {
	return web.New(web.Config{Store: st, Service: d, Log: w.log, Dispatch: dispUI,
		Resume: d.Resume,
		Refine: func(rctx context.Context, id string, more int, categories []string) (string, error) {
			fork, err := w.forker(st).More(rctx, id, more, categories)
			if err != nil {
				return "", err
			}
			d.Adopt(fork) // kiln refine runs it in the foreground instead
			return fork.ID, nil
		},
		Export: func(ectx context.Context, id string, out io.Writer) error {
			camp, err := st.Campaign(ectx, id)
			if err != nil {
				return err
			}
			return w.exportDefault(ectx, st, camp, out)
		},
	})
}

// dispatchDeps are the dispatcher's lanes, campaign limits and server
// check, wired from w.
func dispatchDeps(w *wiring) dispatch.Deps {
	return dispatch.Deps{
		Lanes: w.lanes,
		Limits: func(camp runs.Campaign) (sandboxes.Limits, error) {
			sp, err := storedSpec(camp, false)
			if err != nil {
				return sandboxes.Limits{}, err
			}
			return sp.Sandbox.Limits(), nil
		},
		CheckServer: func(scfg jobs.ServerConfig) error {
			return serverConfigError(scfg, "--nats-host/--nats-port", "--nats-tls", "--nats-tls-cert/--nats-tls-key", "--nats-tls-cert", "--worker-nkeys")
		},
	}
}
