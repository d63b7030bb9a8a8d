package dataset

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kiln-dev/kiln/runs/curate"
)

// Overrides are an export's choices as kiln export's flags give them: the
// record layout, and curation choices that override the spec's curation
// section when Set names their flag.
type Overrides struct {
	Format, Think, Select, Stream, Name                                     string
	All, Pending, Texts, Transcripts, Trajectories, Dedup, KeepContaminated bool
	// Round is the one round to export; -1: every round.
	Round                                            int
	KeepSpeedup, SingleShare, MinSpeedup, Validation float64
	// Against are benchmark folders, added to the spec's.
	Against []string
	// Set holds the names of the flags given ("select", "keep-speedup",
	// ...).
	Set map[string]bool
}

// Layout reads the record layout (--format, --think, --all, --round) into
// the default options. Its errors are the user's.
func (x *Overrides) Layout() (Options, error) {
	opt := DefaultOptions()
	f, err := ParseFormat(x.Format)
	if err != nil {
		return opt, fmt.Errorf("--format: %v", err)
	}
	opt.Format = f
	if opt.Think, err = ParseThink(x.Think); err != nil {
		return opt, fmt.Errorf("--think: %v", err)
	}
	if x.All && (f != Raw || x.Set["select"] || x.Set["against"] || x.Set["dedup"]) {
		return opt, errors.New("--all is the uncurated dump of every judged result: raw records, no --select, --against or --dedup")
	}
	if x.Round < -1 {
		return opt, fmt.Errorf("--round %d: want a round number, or -1 for every round", x.Round)
	}
	return opt, nil
}

// Apply applies the curation choices given over the spec's section in
// opt, then the output choices, and validates the result. Its errors are
// the user's.
func (x *Overrides) Apply(opt *Options, dest Dest) error {
	if err := x.curation(opt); err != nil {
		return err
	}
	for _, a := range x.Against {
		abs, err := filepath.Abs(a)
		if err != nil {
			return fmt.Errorf("--against %s: %v", a, err)
		}
		opt.Benchmarks = append(opt.Benchmarks, abs)
	}
	opt.KeepContaminated = x.KeepContaminated
	opt.Pending = x.Pending
	opt.Texts, opt.Transcripts = x.Texts, x.Transcripts
	opt.Trajectories = x.Trajectories
	opt.Name = x.Name
	if x.Round >= 0 {
		r := x.Round
		opt.Round = &r
	}
	if dest.Dir == "" {
		opt.Validation = 0 // one stream: no split
	}
	return opt.Validate()
}

// curation applies the curation choices whose flag was given.
func (x *Overrides) curation(opt *Options) error {
	if x.Set["dedup"] {
		opt.Dedup = x.Dedup
	}
	if x.Set["select"] {
		p, err := curate.ParsePolicy(x.Select)
		if err != nil {
			return fmt.Errorf("--select: %v", err)
		}
		opt.Selection.Policy = p
	}
	if x.Set["keep-speedup"] {
		opt.Selection.KeepSpeedup = x.KeepSpeedup
	}
	if x.Set["single-share"] {
		opt.Selection.SingleShare = x.SingleShare
	}
	if x.Set["min-speedup"] {
		opt.Selection.MinSpeedup = x.MinSpeedup
	}
	if x.Set["stream"] {
		var err error
		if opt.Selection.Stream, err = curate.ParseStreamPolicy(x.Stream); err != nil {
			return fmt.Errorf("--stream: %v", err)
		}
	}
	if x.Set["validation"] {
		opt.Validation = x.Validation
	}
	return nil
}
