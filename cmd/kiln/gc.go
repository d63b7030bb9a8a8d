package main

import (
	"context"
	"flag"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/report"
)

// cmdGC removes the blobs no stored record refers to (runs.Store.GC): the
// executables kept for pending runs that a later rescore completed
// included. Blobs younger than --min-age are kept, so it is safe while a
// campaign runs.
func cmdGC(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("gc", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	dryRun := fs.Bool("dry-run", false, "report what would be removed; remove nothing")
	minAge := fs.Duration("min-age", runs.DefaultGCMinAge,
		"keep unreferenced blobs younger than this (a running campaign may be about to refer to them); 0 only when no kiln process uses the data folder")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return badInput("gc takes no arguments, got %q", fs.Args())
	}
	if *minAge < 0 {
		return badInput("--min-age must not be negative")
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	st, err := c.openExisting(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	rep, err := st.GC(ctx, runs.GCOptions{MinAge: *minAge, DryRun: *dryRun})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, struct {
			runs.GCReport
			MinAgeSeconds float64 `json:"min_age_s"`
		}{rep, minAge.Seconds()})
	}
	report.GC(e.stdout, rep, *minAge)
	return nil
}
