package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/kiln-dev/kiln/runs"
)

// openExisting opens the data folder's run database for a verb that reads
// campaigns (status, report, export, resume, rescore, refine, gc). A folder
// without one is refused with one message, and nothing is created: no
// folder, no database, no schema migration.
func (c *common) openExisting(ctx context.Context, log *slog.Logger) (*runs.Store, error) {
	if _, err := os.Stat(filepath.Join(c.data, "kiln.db")); err != nil {
		hint := "no campaign has run there; kiln run SPEC or kiln demo makes one, and --data DIR or $KILN_DATA names another"
		if _, derr := os.Stat(c.data); errors.Is(derr, os.ErrNotExist) {
			return nil, badInput("no data folder %s (%s)", c.data, hint)
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, badInput("no run database in %s (%s)", c.data, hint)
		}
		return nil, badInput("data folder %s: %v", c.data, err)
	}
	return c.open(ctx, log)
}

// campaignError is the one message for a campaign reference st cannot
// resolve.
func (c *common) campaignError(ref string, err error) error {
	if errors.Is(err, runs.ErrNotFound) {
		return badInput("no campaign %q in %s (kiln status --data %s lists them)", ref, c.data, c.data)
	}
	return badInput("%v", err) // already "campaign <ref>: ..."
}
