package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"os"
	"strings"

	"github.com/kiln-dev/kiln/sandboxes/selftest"
)

// selftestSecretVar is set in kiln's own environment by "kiln selftest" to a
// random value that no sandboxed program may be able to print.
const selftestSecretVar = "KILN_SELFTEST_SECRET"

// cmdSelftest runs the hostile-program suite against this host's sandbox:
// every case must be contained. Exit 1 if any case escaped.
func cmdSelftest(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	asJSON := fs.Bool("json", false, "print JSON")
	only := fs.String("only", "", "comma-separated case names (default: all)")
	overhead := fs.Int("overhead-runs", 0, "also measure the per-run overhead against a bare exec over N runs")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	w := c.wiring(e, log, verifyDataDir(c.data))
	defer w.close()
	r, err := w.sandbox()
	if err != nil {
		return err
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	secret := hex.EncodeToString(rnd[:])
	// The secret lives in this process's real environment, where a leak
	// through /proc/<kiln>/environ or an inherited environment would show.
	if err := os.Setenv(selftestSecretVar, secret); err != nil {
		return err
	}
	opts := selftest.Options{EnvSecret: secret, Logger: log}
	if *only != "" {
		opts.Only = strings.Split(*only, ",")
	}
	results := selftest.Run(ctx, r, opts)
	passed, failed, skipped := selftest.Summary(results)
	var ov *selftest.Overhead
	if *overhead > 0 {
		o, err := selftest.MeasureOverhead(ctx, r, *overhead)
		if err != nil {
			return err
		}
		ov = &o
	}
	if *asJSON {
		if err := writeJSON(e.stdout, map[string]any{"policy": r.Capabilities().Policy, "capabilities": r.Capabilities(),
			"cases": results, "passed": passed, "failed": failed, "skipped": skipped, "overhead": ov}); err != nil {
			return err
		}
	} else {
		selftest.Print(e.stdout, w.policy(), results, ov)
	}
	if failed > 0 {
		return verdictFailed{}
	}
	return nil
}
