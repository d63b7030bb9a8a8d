package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kiln-dev/kiln/cmd/kiln/internal/spec"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/runs/engine"
)

// cmdServe runs the daemon: the HTTP API plus every submitted campaign.
// Campaigns left unfinished by a previous daemon are resumed.
func cmdServe(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	addr := fs.String("addr", "127.0.0.1:7878", "listen address; anything but loopback needs --token-env")
	tokenEnv := fs.String("token-env", "", "name of the environment variable holding the bearer token")
	specRoot := fs.String("spec-root", ".", "folder that relative paths in submitted specs resolve against (they may not leave it)")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	token := ""
	if *tokenEnv != "" {
		if token = e.getenv(*tokenEnv); token == "" {
			return badInput("--token-env: environment variable %s is empty", *tokenEnv)
		}
	}
	cfg := api.Config{Addr: *addr, Token: token}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return usageError{err}
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
	w := c.wiring(e, log, c.data)
	defer w.close() // after the daemon has stopped: no box is in use then
	if _, err := w.sandbox(); err != nil {
		return err
	}
	d := &engine.Daemon{
		Engine: &engine.Engine{Store: st, Log: log},
		Log:    log,
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
	srv, err := api.New(cfg, d, log)
	if err != nil {
		return usageError{err}
	}
	if err := d.Start(ctx); err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		_ = d.Stop(context.Background())
		return err
	}
	fmt.Fprintf(e.stderr, "kiln: serving on http://%s (data in %s)\n", srv.Addr(), c.data)
	select {
	case <-e.soft:
	case <-ctx.Done():
	}
	log.Info("stopping: finishing in-flight attempts")
	sctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	errAPI := srv.Stop(sctx)
	// The daemon stops softly until ctx (the second signal) or the grace ends.
	dctx, dcancel := context.WithTimeout(ctx, stopGrace)
	defer dcancel()
	errD := d.Stop(dctx)
	if err := errors.Join(errAPI, errD); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	_ = time.Second
	return nil
}
