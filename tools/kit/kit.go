// Package kit is the lane kit contract: everything kiln knows about one
// lane sits in the lane's folder, tools/<lane>, behind one Kit value, and
// the lanes a binary runs are listed once, in package tools/lanes. The
// campaign engine, refinement, the store and cmd/kiln consume kits and
// never name a lane.
//
// A kit says, for its lane:
//
//   - Open: the verifier (tools.Lane: answer extractor, model tools,
//     Verify, and tools.Completer for stages another host finishes),
//     built from the host's sandbox and toolchains;
//   - Toolchains: the tools it needs (kiln doctor reports them per lane);
//   - Source: the tasks of a campaign (the spec's tasks section: its
//     corpus or templates), for round 0 and for refinement rounds;
//   - System and Repair: its prompts;
//   - Rules: its failure taxonomy, construct features, suspicion check,
//     task identity and resynthesis format (refinement.LaneRules);
//   - Validator: the check a synthesised task must pass;
//   - Domain: the domain label of an answer the verifier did not label;
//   - Verify: the flags of `kiln verify <lane>`;
//   - Commands: verbs of its own (`kiln bench compile`);
//   - Example: a task with a right, a wrong and a cheating answer, and a
//     synthesiser's reply, which the conformance suite runs.
//
// The conformance suite (kittest) runs every registered kit through one
// contract. See tools/README.md for a walk-through of adding a lane.
package kit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// Kit is one lane's kit. Name, Summary, Open, Source, System, Rules and
// Example are required; the rest is optional.
type Kit struct {
	// Name is the lane's name in specs, records and verbs.
	Name string
	// Summary says in a line what the lane does.
	Summary string
	// Toolchains are the toolchain names (sandboxes/toolchain) the lane
	// needs on a host that verifies its answers.
	Toolchains []string
	// ProbeToolchains asks for the toolchains' targets to be verified by
	// a tiny compile before the lane opens (cached in the data folder).
	ProbeToolchains bool
	// Capability names what a host needs to finish the stages this lane
	// leaves pending (its Completer): CapabilityGPU, CapabilityAMD or
	// CapabilityTorch. kiln serve --dispatch sends pending verdicts to the
	// workers offering it (kiln worker --capabilities). "": the lane
	// leaves nothing pending.
	Capability string
	// ItemCapability, when set, names the capability a pending task of
	// this lane needs where it is not Capability ("" for Capability):
	// ptx2cuda's torch program tasks are judged by torch2cuda's judge
	// (CapabilityTorch), its other tasks need only a GPU.
	ItemCapability func(item tools.Item) string

	// Open builds the lane's verifier. lim are the sandbox limits of the
	// campaign's spec, for the programs the lane runs.
	Open func(ctx context.Context, h Host, lim sandboxes.Limits) (tools.Lane, error)
	// Source reads a campaign's tasks: the spec's tasks section.
	Source func(t Tasks) (*TaskSet, error)
	// System writes the system prompt; tools are the names of the model
	// tools offered (none when the model gets no tools).
	System func(t Tasks, tools []string) (string, error)
	// Repair writes the repair turn after a failed verdict; nil takes
	// the agent's default wording.
	Repair func(v tools.Verdict) (string, error)
	// Rules are the lane's refinement rules.
	Rules func() (refinement.LaneRules, error)
	// Validator checks a synthesised task with the opened lane; nil
	// accepts every candidate that parses and is no duplicate. Errors of
	// the validator itself (not of the task) wrap
	// refinement.ErrValidatorBroken. A validator that is also a
	// refinement.Preparer completes the candidate with what only the
	// lane's tools make (ptx2cuda: the kernel's PTX), and
	// TaskSet.FromCandidate gets the prepared candidate.
	Validator func(l tools.Lane) (refinement.Validator, error)
	// Domain gives the domain label of a task's answer when the verifier
	// recorded none (tools.ArtifactDomain); nil leaves it empty.
	Domain func(t Tasks) (func(task runs.Task, answer string) string, error)
	// Normalise tokenises the lane's answers for near-duplicate removal
	// and the contamination check of kiln export (runs/curate); nil
	// means curate.Normalise (source code). Lanes whose answers are
	// assembly give curate.NormaliseAsm.
	Normalise func(answer string) []string
	// SharesGPU says Open honours Host.SlotsPerDevice (several evaluations
	// at once on one GPU); cmd/kiln refuses gpu.slots_per_device above 1
	// for lanes without it.
	SharesGPU bool
	// RecordLanes are the lanes whose verified records Source takes as
	// tasks (the spec's tasks.from_campaign: Tasks.Records); nil: the lane
	// takes none, and cmd/kiln refuses the field.
	RecordLanes []string
	// Bench is the lane's embedded benchmark set, which `tasks.corpus:
	// bench` runs (kiln eval): the files under root in fsys. kiln export
	// checks campaign data of every lane against every lane's bench set
	// for contamination. nil: the lane has no bench set.
	Bench func() (fsys fs.FS, root string, err error)
	// Verify is `kiln verify <lane>`; nil: the lane has no such verb.
	Verify *VerifyCommand
	// Commands are verbs of the lane's own, such as "bench compile".
	Commands []Command

	// Example is a worked example of the lane: the conformance suite
	// (kittest) runs it, and it shows a lane author what the lane takes
	// and gives. Required.
	Example func() (Example, error)
}

// The capabilities a worker host offers for lanes' pending stages
// (Kit.Capability; kiln worker --capabilities).
const (
	// CapabilityGPU: an NVIDIA GPU that runs the executables built on a
	// CPU host (sm_86/sm_90).
	CapabilityGPU = "gpu"
	// CapabilityAMD: an AMD RDNA3 (gfx1100) GPU.
	CapabilityAMD = "amd"
	// CapabilityTorch: python3 with a CUDA build of torch and an NVIDIA
	// GPU (the torch2cuda judge).
	CapabilityTorch = "torch"
)

// Example is a lane's worked example: a task and answers to it that the
// lane must judge right, wrong and suspect, and a synthesiser's reply it
// must parse. Answers are model replies (fenced blocks are extracted).
type Example struct {
	// Tasks are the spec's tasks section the example task comes from.
	Tasks Tasks
	// Task is one of Source(Tasks)'s round-0 tasks, by key.
	TaskKey string
	// Right passes (stages that need another host may be pending).
	Right string
	// Wrong fails with WrongClass.
	Wrong      string
	WrongClass tools.FailureClass
	// Cheat is an answer the lane's suspicion check flags.
	Cheat string
	// Synth is a synthesiser's reply with at least one valid TASK block
	// of SynthCategory (empty when the lane has no synthesis format).
	Synth         string
	SynthCategory string
}

// Host is what a lane may use of the host it runs on; cmd/kiln wires it.
type Host struct {
	// Sandbox returns the process's sandbox runner.
	Sandbox func() (*sandboxes.Runner, error)
	// Toolchains returns the host's toolchains; with probe, every target
	// verified by a tiny compile.
	Toolchains func(ctx context.Context, probe bool) (*toolchain.Registry, error)
	// DataDir is the data folder (absolute); caches live under it.
	DataDir string
	Log     *slog.Logger
	// SlotsPerDevice is the spec's gpu.slots_per_device (0: the lane's
	// default), for lanes with Kit.SharesGPU.
	SlotsPerDevice int
	// GPUDevices is the spec's gpu.devices: how many of the host's GPUs
	// to judge on, the first ones (0: all), for lanes with Kit.SharesGPU.
	GPUDevices int
	// Records reads campaigns' verified records from the run database of
	// the data folder (kiln ptx prepare --from-campaign); nil where kiln
	// has none to offer.
	Records RecordReader
}

// Tasks is the spec's tasks section as a lane reads it. The lane decides
// which fields it accepts (a corpus lane refuses templates, and so on).
type Tasks struct {
	// Corpus is "builtin" (the lane's embedded corpus), "bench" (its
	// benchmark set, Kit.Bench; lanes without one refuse it), a folder, or
	// "" when Templates is used.
	Corpus string
	// Templates, when set, renders tasks from persona templates.
	Templates *Templates
	// FromCampaign is tasks.from_campaign: the campaign (name or id) whose
	// verified records are the tasks, for lanes with RecordLanes; "" when
	// Corpus or Templates is used.
	FromCampaign string
	// Records are FromCampaign's verified records, read from the store by
	// cmd/kiln before Source is called (Source never opens the store).
	Records []Record
	// Categories keeps only these categories; empty keeps all.
	Categories []string
	// Limit is how many items (or prompts) to take; 0: all.
	Limit int
	// Seed makes every draw deterministic.
	Seed int64
	// SamplesPerTask is how many tasks each item becomes (>= 1).
	SamplesPerTask int
	// Benchmarks are the spec's curation.benchmarks (absolute folders of
	// benchmark documents): a lane that synthesises tasks may add their
	// documents to TaskSet.Corpus, so that refinement drops synthesised
	// tasks that duplicate a benchmark's (torch2cuda). Optional.
	Benchmarks []string
}

// Templates is the spec's tasks.templates.
type Templates struct {
	// Dir is "builtin" or a folder of templates laid over the builtin ones.
	Dir   string
	Pools map[string][]string
}

// TaskSet is a campaign's tasks: round 0, and what refinement rounds draw
// from. Every function is deterministic for its arguments.
type TaskSet struct {
	// Round0 are round 0's tasks (Key unique; Round 0).
	Round0 []runs.Task
	// Corpus holds one task per corpus item (nil for a template source):
	// synthesised tasks duplicating one are dropped.
	Corpus []runs.Task
	// Known are the categories round 0 could draw (for the policy's
	// few-samples rule).
	Known []string
	// Draw returns round's drawn tasks, sampled with category weights. It
	// must not call a model (kiln refine --plan uses it).
	Draw func(round int, weights map[string]float64) ([]runs.Task, error)
	// FromCandidate turns an accepted synthesised task into round's tasks
	// (as the kit's Validator prepared it when that is a
	// refinement.Preparer).
	FromCandidate func(round int, c refinement.Candidate) ([]runs.Task, error)
}

// VerifyCommand is `kiln verify <lane>`: it judges one answer by hand.
type VerifyCommand struct {
	// Usage lists the flags, for kiln's usage text.
	Usage string
	// Flags registers the lane's flags on fs and returns what reads them,
	// once parsed, into the item to verify against and the answer's raw
	// text (a model reply with a fenced block is extracted by the caller).
	// Errors that are the user's are UsageError.
	Flags func(fs *flag.FlagSet) func() (item tools.Item, answer string, err error)
}

// Command is a verb of a lane's own.
type Command struct {
	// Verb is the command line that names it ("bench compile").
	Verb string
	// Summary says what it does in a line.
	Summary string
	// Flags registers the command's flags on fs and returns what runs it
	// once they are parsed: the result goes to stdout, progress to
	// stderr. Errors that are the user's (a bad flag value, an unreadable
	// file) are UsageError.
	Flags func(fs *flag.FlagSet) func(ctx context.Context, h Host, stdout, stderr io.Writer) error
	// Arg, when set, names the flag that one positional argument fills
	// ("file": kiln ptx roll F.ptx is kiln ptx roll --file F.ptx).
	Arg string
	// Text marks a command that only transforms text: it uses no sandbox,
	// toolchain or data folder, so kiln offers none of their flags and
	// gives it a Host with only Log set.
	Text bool
}

// UsageError is a command's bad input (exit status 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// BadInput returns a UsageError with a formatted message.
func BadInput(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// Registry holds the kits of a binary by name.
type Registry struct {
	kits  map[string]*Kit
	names []string
	rules *refinement.Lanes
}

// NewRegistry checks the kits (required parts, unique names) and compiles
// their refinement rules.
func NewRegistry(kits ...Kit) (*Registry, error) {
	r := &Registry{kits: map[string]*Kit{}}
	var rules []refinement.LaneRules
	for i := range kits {
		k := kits[i]
		if err := k.check(); err != nil {
			return nil, err
		}
		if _, dup := r.kits[k.Name]; dup {
			return nil, fmt.Errorf("kit %s: registered twice", k.Name)
		}
		lr, err := k.Rules()
		if err != nil {
			return nil, fmt.Errorf("kit %s: rules: %w", k.Name, err)
		}
		if lr.Lane != k.Name {
			return nil, fmt.Errorf("kit %s: rules name lane %q", k.Name, lr.Lane)
		}
		rules = append(rules, lr)
		r.kits[k.Name] = &k
		r.names = append(r.names, k.Name)
	}
	sort.Strings(r.names)
	var err error
	if r.rules, err = refinement.NewLanes(rules...); err != nil {
		return nil, err
	}
	return r, nil
}

func (k Kit) check() error {
	var missing []string
	if k.Name == "" {
		return errors.New("kit without a name")
	}
	for name, ok := range map[string]bool{"Summary": k.Summary != "", "Open": k.Open != nil, "Source": k.Source != nil,
		"System": k.System != nil, "Rules": k.Rules != nil, "Example": k.Example != nil} {
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("kit %s: missing %s", k.Name, strings.Join(missing, ", "))
	}
	return nil
}

// Names returns the registered lanes, sorted.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Get returns the kit of lane.
func (r *Registry) Get(lane string) (*Kit, bool) {
	k, ok := r.kits[lane]
	return k, ok
}

// Lookup returns the kit of lane, or an error naming the lanes there are.
func (r *Registry) Lookup(lane string) (*Kit, error) {
	if k, ok := r.kits[lane]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("lane %q is not available in this build (have %s)", lane, strings.Join(r.names, ", "))
}

// Rules returns refinement's view of every lane.
func (r *Registry) Rules() *refinement.Lanes { return r.rules }

// Command returns the lane command whose Verb is verb.
func (r *Registry) Command(verb string) (*Command, bool) {
	for _, n := range r.names {
		for i, c := range r.kits[n].Commands {
			if c.Verb == verb {
				return &r.kits[n].Commands[i], true
			}
		}
	}
	return nil, false
}

// Commands returns every lane command, by verb.
func (r *Registry) Commands() []Command {
	var out []Command
	for _, n := range r.names {
		out = append(out, r.kits[n].Commands...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Verb < out[j].Verb })
	return out
}
