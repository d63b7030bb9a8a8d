// Package buildjob runs the lanes' build jobs: one or more toolchain
// commands over a few input files, run in a fresh sandbox box, bounded by
// a semaphore and cached in a [toolchain.Cache] under a key of everything
// that decides their result (the lane's namespace, the commands, the
// tools' versions, the outputs and the inputs). It also owns the helpers
// that turn a failed job's output into a short diagnostic.
//
// A lane holds one [Runner], made from its sandbox, toolchains, cache and
// build limits; what differs between lanes (the key's namespace, whether
// a tool's environment is keyed, how long a file may be) is its [Config].
package buildjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// Step is one command of a job. Tool names a registry tool (its path and
// environment are used); Path, when set, is an absolute program path run
// instead (a program the registry does not list, such as ld.lld next to
// llvm-mc), keyed by its base name and Tool's version.
type Step struct {
	Tool string
	Path string
	Args []string
}

// Job is a sandboxed run of its steps in one box, in order; the first
// that fails ends it.
type Job struct {
	Name    string // cache namespace and logs
	Steps   []Step
	Inputs  map[string][]byte
	Outputs []string // read back, when present, once every step succeeded
}

// Command is a job of one step: tool run with args.
func Command(name, tool string, args []string, inputs map[string][]byte, outputs ...string) Job {
	return Job{Name: name, Steps: []Step{{Tool: tool, Args: args}}, Inputs: inputs, Outputs: outputs}
}

// Entry Meta keys.
const (
	MetaOutcome  = "outcome"  // the sandbox outcome of the last step run
	MetaDescribe = "describe" // how the last step run ended, in words
	MetaStep     = "step"     // the index of the step that failed
)

// Result is a job's cache entry and how this call got it.
type Result struct {
	Entry *toolchain.Entry
	Hit   bool          // from the cache
	Wall  time.Duration // this call's time (lookup, wait or run)
	actor string        // what FailureText calls the program
}

// OK reports whether every step exited 0.
func (r *Result) OK() bool {
	return r.Exited() && r.Entry.ExitCode == 0
}

// Exited reports whether the last step ended by itself (not killed).
func (r *Result) Exited() bool {
	return r.Entry.Meta[MetaOutcome] == string(sandboxes.OutcomeExited)
}

// Class is a failed job's failure class: limits and timeouts are their
// own classes, anything else def.
func (r *Result) Class(def tools.FailureClass) tools.FailureClass {
	switch sandboxes.Outcome(r.Entry.Meta[MetaOutcome]) {
	case sandboxes.OutcomeTimeout:
		return tools.ClassTimeout
	case sandboxes.OutcomeResourceLimit:
		return tools.ClassResourceLimit
	}
	return def
}

// CachedNote is " (cached)" for a result the cache answered, else "".
func (r *Result) CachedNote() string {
	if r.Hit {
		return " (cached)"
	}
	return ""
}

// FailureText is a failed job's diagnostic diag, prefixed by why the
// sandbox ended it when it did not just exit ("the compiler timed out").
func (r *Result) FailureText(diag string) string {
	if r.Exited() {
		if strings.TrimSpace(diag) == "" {
			return r.Entry.Meta[MetaDescribe]
		}
		return diag
	}
	return r.actor + " " + r.Entry.Meta[MetaDescribe] + "\n" + diag
}

// Config is what a lane's jobs share.
type Config struct {
	// Namespace is every key's first part: the lane's cache version.
	// Changing it drops the lane's cache.
	Namespace string
	// Toolchains resolves each step's tool; its versions are keyed.
	Toolchains *toolchain.Registry
	// Sandbox opens a fresh box per job; Limits bound every step.
	Sandbox *sandboxes.Runner
	Limits  sandboxes.Limits
	// Cache stores results by key.
	Cache *toolchain.Cache
	// Parallel bounds the jobs running at once (at least 1).
	Parallel int
	// MaxOutputFile bounds a file read back.
	MaxOutputFile int64
	// KeyEnv keys each step's tool environment after its arguments.
	KeyEnv bool
	// KeyArgs maps a step's arguments to their keyed form (host folders
	// replaced, see [DeriveROCmLibPath]); nil keys them as they are.
	KeyArgs func([]string) []string
	// Actor is what a failure text calls the program ("the compiler").
	Actor string
	// Logger receives a debug record per job, with LogMessage.
	Logger     *slog.Logger
	LogMessage string
}

// Runner runs a lane's jobs. It is safe for concurrent use.
type Runner struct {
	cfg Config
	sem *semaphore.Weighted
}

// New returns a runner. cfg.Logger nil discards.
func New(cfg Config) *Runner {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg, sem: semaphore.NewWeighted(int64(max(cfg.Parallel, 1)))}
}

// DeriveROCmLibPath replaces the host-specific folder of
// --rocm-device-lib-path, so that hosts with different data folders share
// cache entries (a Config.KeyArgs).
func DeriveROCmLibPath(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "--rocm-device-lib-path=") {
			a = "--rocm-device-lib-path=<derived>"
		}
		out[i] = a
	}
	return out
}

// Key is j's cache key: namespace, job, then per step its command (tool
// name, not path), arguments, environment (with KeyEnv) and tool version,
// then the outputs and the inputs by name.
func (r *Runner) Key(j Job) string {
	versions := r.cfg.Toolchains.Versions()
	parts := []string{r.cfg.Namespace, j.Name}
	for _, s := range j.Steps {
		name, args := s.Tool, s.Args
		if s.Path != "" {
			name = s.Tool + ":" + filepath.Base(s.Path)
		}
		if r.cfg.KeyArgs != nil {
			args = r.cfg.KeyArgs(args)
		}
		parts = append(parts, name, strings.Join(args, "\x00"))
		if r.cfg.KeyEnv {
			tool, _ := r.cfg.Toolchains.Get(s.Tool)
			parts = append(parts, strings.Join(tool.Env, "\x00"))
		}
		parts = append(parts, toolchain.VersionsPart(versions, s.Tool))
	}
	parts = append(parts, strings.Join(j.Outputs, "\x00"))
	names := make([]string, 0, len(j.Inputs))
	for n := range j.Inputs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		parts = append(parts, n, string(j.Inputs[n]))
	}
	return toolchain.Key(parts...)
}

// Run returns j's result from the cache or by running it in a box.
func (r *Runner) Run(ctx context.Context, j Job) (*Result, error) {
	for _, s := range j.Steps {
		if _, ok := r.cfg.Toolchains.Get(s.Tool); !ok {
			return nil, fmt.Errorf("%s: %w", j.Name, r.cfg.Toolchains.Require(s.Tool))
		}
	}
	start := time.Now()
	e, hit, err := r.cfg.Cache.Do(ctx, r.Key(j), func(ctx context.Context) (*toolchain.Entry, bool, error) {
		return r.run(ctx, j)
	})
	if err != nil {
		return nil, err
	}
	r.cfg.Logger.Debug(r.cfg.LogMessage, "job", j.Name, "cached", hit, "exit", e.ExitCode, "took", time.Since(start))
	return &Result{Entry: e, Hit: hit, Wall: time.Since(start), actor: r.cfg.Actor}, nil
}

// run runs j's steps in a fresh box, bounded by the semaphore.
func (r *Runner) run(ctx context.Context, j Job) (*toolchain.Entry, bool, error) {
	if err := r.sem.Acquire(ctx, 1); err != nil {
		return nil, false, fmt.Errorf("%s: %w", j.Name, context.Cause(ctx))
	}
	defer r.sem.Release(1)
	box, err := r.cfg.Sandbox.Open(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", j.Name, err)
	}
	defer box.Close()
	for name, b := range j.Inputs {
		if err := box.WriteFile(name, b, 0o644); err != nil {
			return nil, false, fmt.Errorf("%s: %w", j.Name, err)
		}
	}
	e := &toolchain.Entry{Files: map[string][]byte{}, Meta: map[string]string{}}
	store := true
	for i, s := range j.Steps {
		tool, _ := r.cfg.Toolchains.Get(s.Tool)
		prog := tool.Path
		if s.Path != "" {
			prog = s.Path
		}
		res, err := box.Run(ctx, sandboxes.Spec{Argv: append([]string{prog}, s.Args...), Env: tool.Env, Limits: r.cfg.Limits})
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", j.Name, err)
		}
		e.Stdout, e.Stderr, e.ExitCode = append(e.Stdout, res.Stdout...), append(e.Stderr, res.Stderr...), res.ExitCode
		e.Wall += res.Wall
		e.Meta[MetaOutcome], e.Meta[MetaDescribe] = string(res.Outcome()), res.Describe()
		// An exit status is a property of the inputs; a timeout, a limit
		// or a crash may not be.
		store = store && res.Outcome() == sandboxes.OutcomeExited && !res.StdoutTruncated && !res.StderrTruncated
		if !res.OK() {
			e.Meta[MetaStep] = fmt.Sprint(i)
			return e, store, nil
		}
	}
	for _, name := range j.Outputs {
		b, err := box.ReadFile(name, r.cfg.MaxOutputFile)
		if errors.Is(err, os.ErrNotExist) {
			continue // the caller says so
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", j.Name, err)
		}
		e.Files[name] = b
	}
	return e, store, nil
}
