package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/runs/dispatch"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
)

// cmdWorker is `kiln worker`: it pulls jobs of its capabilities from the
// daemon's NATS JetStream queue, runs them and publishes their results.
// It holds no API token and no model key: nothing it receives carries one.
// The first SIGINT/SIGTERM drains (no new jobs, running ones finish, for up
// to stopGrace); a second hands the running jobs back to the queue.
func cmdWorker(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	url := fs.String("nats", "", "NATS URL of the daemon's queue (kiln serve's embedded server, or a cluster: comma separated; tls://host:port for TLS)")
	caps := fs.String("capabilities", "gpu", "comma-separated capabilities this host offers (gpu, amd, torch, ...)")
	creds := fs.String("creds", "", "NATS credentials file (JWT and seed) for an external cluster")
	nkey := fs.String("nkey", "", "file with this worker's nkey seed (SU...), whose public key the daemon lists (kiln serve --worker-nkeys)")
	natsCA := fs.String("nats-ca", "", "CA certificate (PEM) of the NATS server's TLS certificate: the one it generated is <store>/tls/ca.pem (kiln nats-node), <data>/nats/tls/ca.pem (kiln serve --dispatch)")
	natsCert := fs.String("nats-cert", "", "client certificate (PEM) for a NATS server that wants mutual TLS (--tls-client-ca)")
	natsKey := fs.String("nats-key", "", "the client certificate's key (PEM)")
	id := fs.String("id", "", "worker id in heartbeats and results (default host-pid)")
	conc := fs.Int("concurrency", 1, "jobs of each capability run at once")
	testKinds := fs.Bool("test-kinds", false, "also run the test and benchmark job kinds (sleep, exit): never on a production host")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if *url == "" {
		return badInput("--nats URL is required")
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	var capList []string
	for _, cp := range strings.Split(*caps, ",") {
		if cp = strings.TrimSpace(cp); cp != "" {
			capList = append(capList, cp)
		}
	}
	handlers := map[string]jobs.Handler{}
	if *testKinds {
		handlers[sleepJobKind] = sleepJob
		handlers[exitJobKind] = exitJob
	}
	w := c.wiring(e, log, c.data)
	defer w.close()
	handlers[dispatch.CompleteJobKind] = completeJobHandler(w)
	wc := jobs.WorkerConfig{ID: *id, Capabilities: capList, Handlers: handlers, Concurrency: *conc, Log: log}
	wc.Host = workerHost(ctx, w, capList, log)
	wc.Defaults()
	if err := wc.Validate(); err != nil {
		return usageError{err}
	}
	if (*natsCert == "") != (*natsKey == "") {
		return badInput("--nats-cert and --nats-key go together")
	}
	nc, err := dispatch.Connect(jobs.ConnConfig{URL: *url, Name: "kiln worker " + wc.ID, CredsFile: *creds, NKeySeedFile: *nkey,
		CAFile: *natsCA, CertFile: *natsCert, KeyFile: *natsKey})
	if err != nil {
		return err
	}
	defer nc.Close()
	wk, err := jobs.NewWorker(nc, wc)
	if err != nil {
		return usageError{err}
	}
	// A stop signal while the worker still waits for the daemon's queue
	// (its artifact store) ends the wait at once.
	startCtx, stopStart := context.WithCancel(ctx)
	go func() {
		select {
		case <-e.soft:
			stopStart()
		case <-startCtx.Done():
		}
	}()
	err = wk.Start(startCtx)
	stopStart()
	if err != nil {
		select {
		case <-e.soft:
			return nil
		default:
		}
		return err
	}
	fmt.Fprintf(e.stderr, "kiln: worker %s pulling %s jobs from %s\n", wk.ID(), strings.Join(capList, ","), *url)
	select {
	case <-e.soft:
	case <-ctx.Done():
	}
	log.Info("worker draining")
	sctx, cancel := context.WithTimeout(ctx, stopGrace)
	defer cancel()
	if err := wk.Stop(sctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// The test and benchmark job kinds (kiln worker --test-kinds).
const (
	// sleepJobKind sleeps for the payload's ms: a job of fixed duration
	// for the kill test and the throughput benchmark.
	sleepJobKind = "sleep"
	// exitJobKind makes the worker process exit at once, every time: the
	// poison job of the dead-letter test.
	exitJobKind = "exit"
)

type sleepPayload struct {
	MS int `json:"ms"`
}

func sleepJob(ctx context.Context, j jobs.Job, _ *jobs.Artifacts) (json.RawMessage, error) {
	var p sleepPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return nil, jobs.Permanent(fmt.Errorf("sleep job: %w", err))
	}
	t := time.NewTimer(time.Duration(p.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return json.Marshal(map[string]any{"slept_ms": p.MS, "pid": os.Getpid()})
}

func exitJob(context.Context, jobs.Job, *jobs.Artifacts) (json.RawMessage, error) {
	os.Exit(9)
	return nil, nil
}

// completeJobHandler runs complete jobs with lanes opened on this host
// (once per lane and sandbox limits).
// testCompleteLane is nil in kiln. This package's tests set it (in the
// test binary, which a test runs as `kiln worker`) to a lane whose
// Completer stands in for a GPU host, so that worker processes can complete
// real pending verdicts on a CPU host.
var testCompleteLane func(lane string) tools.Lane

func completeJobHandler(w *wiring) jobs.Handler {
	var mu sync.Mutex
	type key struct {
		lane string
		lim  sandboxes.Limits
	}
	opened := map[key]tools.Lane{}
	return func(ctx context.Context, j jobs.Job, art *jobs.Artifacts) (json.RawMessage, error) {
		var cj engine.CompleteJob
		if err := json.Unmarshal(j.Payload, &cj); err != nil {
			return nil, jobs.Permanent(fmt.Errorf("complete job: %w", err))
		}
		mu.Lock()
		lane, ok := opened[key{cj.Lane, cj.Limits}]
		if !ok && testCompleteLane != nil {
			lane, ok = testCompleteLane(cj.Lane), true
		}
		if !ok {
			k, err := w.kit(cj.Lane)
			if err == nil {
				if _, err = w.sandbox(); err == nil {
					lane, err = k.Open(ctx, w.host(), cj.Limits)
				}
			}
			if err != nil {
				mu.Unlock()
				return nil, jobs.Permanent(fmt.Errorf("complete job: open lane %s: %w", cj.Lane, err))
			}
			opened[key{cj.Lane, cj.Limits}] = lane
		}
		mu.Unlock()
		out, err := engine.RunCompletion(ctx, lane, cj, art, w.toolchain())
		if err != nil {
			return nil, err
		}
		out.Policy = w.policy()
		return json.Marshal(out)
	}
}
