package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/runs/dispatch"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
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
	slots := fs.Int("slots-per-device", 1, "evaluations at once on each GPU, timing alone (lanes that share a GPU: torch2cuda; 1-8)")
	gpus := fs.Int("gpus", 0, "judge on the first N GPUs of this host (lanes that spread over GPUs: torch2cuda; default all)")
	testKinds := fs.Bool("test-kinds", false, "also run the test and benchmark job kinds (sleep, exit): never on a production host")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if *url == "" {
		return badInput("--nats URL is required")
	}
	if *slots < 1 || *slots > spec.MaxSlotsPerDevice {
		return badInput("--slots-per-device %d: want 1-%d", *slots, spec.MaxSlotsPerDevice)
	}
	if *gpus < 0 {
		return badInput("--gpus %d: want 1 or more (or leave it out)", *gpus)
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	capList := splitList(*caps)
	handlers := map[string]jobs.Handler{}
	if *testKinds {
		handlers = dispatch.TestHandlers()
	}
	w := c.wiring(e, log, c.data)
	defer w.close()
	w.slotsPerDevice, w.gpuDevices = *slots, *gpus
	handlers[dispatch.CompleteJobKind] = dispatch.CompleteHandler(completeHost(w))
	wc := jobs.WorkerConfig{ID: *id, Capabilities: capList, Handlers: handlers, Concurrency: *conc, Log: log}
	wc.Host = dispatch.HostInfo(func() (*toolchain.Registry, error) { return w.registry(ctx, false) }, w.lanes, capList, log)
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
	if stopped, err := wk.StartUnless(ctx, e.soft); stopped || err != nil {
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

// completeHost is what complete jobs use of this host: lanes opened with
// w's sandbox, or the test lane (testCompleteLane) where a test set one.
func completeHost(w *wiring) dispatch.Host {
	return dispatch.Host{
		Open: func(ctx context.Context, lane string, lim sandboxes.Limits) (tools.Lane, error) {
			if testCompleteLane != nil {
				return testCompleteLane(lane), nil
			}
			k, err := w.kit(lane)
			if err != nil {
				return nil, err
			}
			if _, err := w.sandbox(); err != nil {
				return nil, err
			}
			h := w.host()
			if k.SharesGPU {
				h.SlotsPerDevice, h.GPUDevices = w.slotsPerDevice, w.gpuDevices
			}
			return k.Open(ctx, h, lim)
		},
		Toolchain: w.toolchain,
		Policy:    w.policy,
	}
}

// testCompleteLane is nil in kiln. This package's tests set it (in the
// test binary, which a test runs as `kiln worker`) to a lane whose
// Completer stands in for a GPU host, so that worker processes can complete
// real pending verdicts on a CPU host.
var testCompleteLane func(lane string) tools.Lane
