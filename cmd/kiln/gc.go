package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/kiln-dev/kiln/runs"
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
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(e.stdout, "blobs: %d (%s): %d live (%s), %d unreferenced but younger than %s kept (%s)\n",
		rep.Blobs, byteSize(rep.Bytes), rep.Live, byteSize(rep.LiveBytes), rep.Young, *minAge, byteSize(rep.YoungBytes))
	fmt.Fprintf(e.stdout, "%s %d blobs, %s freed", verb, rep.Removed, byteSize(rep.RemovedBytes))
	if rep.Completed > 0 {
		fmt.Fprintf(e.stdout, " (%d of them, %s, kept for pending runs since completed)", rep.Completed, byteSize(rep.CompletedBytes))
	}
	fmt.Fprintf(e.stdout, "; %d empty folders\n", rep.Dirs)
	if rep.Missing > 0 {
		fmt.Fprintf(e.stdout, "warning: %d blobs that records refer to are missing from the store\n", rep.Missing)
	}
	return nil
}

// byteSize formats n bytes with a binary unit.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
