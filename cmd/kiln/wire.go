package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/cmd/kiln/internal/engine"
	"github.com/kiln-dev/kiln/cmd/kiln/internal/spec"
	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/c2x86"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// lanes are the lanes this binary runs end to end.
var lanes = []string{c2x86.LaneName, cudasynth.LaneName}

func specOptions(dir string) spec.Options {
	return spec.Options{Lanes: lanes, Dir: dir, CheckPaths: true}
}

// wiring builds the real components of a campaign: the sandbox runner (one
// per process), lanes, model pools, tasks and prompts.
type wiring struct {
	e    env
	log  *slog.Logger
	data string // data folder: sandbox scratch and caches live under it
	// httpClient is used by the model adapters; nil means their default.
	httpClient *http.Client

	// allowMissing lowers the sandbox policy: these layers may be absent
	// (the policy string in every verdict then says so).
	allowMissing []sandboxes.Layer
	// cgroupParent is sandboxes.Config.CgroupParent.
	cgroupParent string

	mu        sync.Mutex
	runner    *sandboxes.Runner
	caps      string
	reg       *toolchain.Registry
	regProbed bool
}

// close releases the sandbox runner (its scratch and cgroups).
func (w *wiring) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runner != nil {
		if err := w.runner.Close(); err != nil {
			w.log.Warn("close sandbox runner", "err", err)
		}
		w.runner = nil
	}
}

func newWiring(e env, log *slog.Logger, data string) *wiring {
	return &wiring{e: e, log: log, data: data}
}

// sandbox returns the process's sandbox runner, creating it on first use.
func (w *wiring) sandbox() (*sandboxes.Runner, error) {
	// The sandbox view must hold the toolchains' own folders and config
	// files (/etc/nvcc.profile, /opt/rocm...): ask the registry first.
	reg, err := w.registry(context.Background(), false)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runner != nil {
		return w.runner, nil
	}
	root, err := sandboxRoot(w.data)
	if err != nil {
		return nil, err
	}
	r, err := sandboxes.New(sandboxes.Config{ScratchRoot: root, Logger: w.log,
		ReadOnlyPaths: reg.SandboxPaths(), AllowMissing: w.allowMissing, CgroupParent: w.cgroupParent})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	w.runner = r
	w.caps = r.Capabilities().String()
	return r, nil
}

// sandboxRoot returns the folder for the sandboxes' scratch dirs. Sandboxed
// processes run under their own uids, so every folder above the scratch must
// be searchable by them: a data folder under /root (mode 0700) is not. The
// root is therefore a folder of ours under the system temp dir, one per data
// folder, checked to be a real directory owned by us (not a planted link).
func sandboxRoot(data string) (string, error) {
	abs, err := filepath.Abs(data)
	if err != nil {
		return "", err
	}
	base := filepath.Join(os.TempDir(), fmt.Sprintf("kiln-sandbox-%d", os.Geteuid()))
	if err := ownedDir(base); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, hex.EncodeToString(sum[:6])), nil
}

// ownedDir makes dir (mode 0711) or checks that the existing one is a
// directory owned by this process's user.
func ownedDir(dir string) error {
	if err := os.Mkdir(dir, 0o711); err != nil && !os.IsExist(err) {
		return fmt.Errorf("sandbox root: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("sandbox root: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("sandbox root %s: not a directory owned by uid %d; remove it", dir, os.Geteuid())
	}
	return os.Chmod(dir, 0o711)
}

// policy is the isolation summary recorded in every verdict.
func (w *wiring) policy() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.caps
}

// toolchain returns the toolchain versions recorded in every verdict.
func (w *wiring) toolchain() map[string]string {
	reg, err := w.registry(context.Background(), false)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	v := reg.Versions()
	if g := reg.GPU(); g.Present {
		v["gpu"] = strings.Join(g.Names, ", ") + " (driver " + g.Driver + ")"
	}
	return v
}

// lane builds sp's lane with the spec's sandbox limits.
func (w *wiring) lane(sp *spec.Spec) (tools.Lane, error) {
	r, err := w.sandbox()
	if err != nil {
		return nil, err
	}
	switch sp.Lane {
	case c2x86.LaneName:
		cache, err := filepath.Abs(filepath.Join(w.data, "cache", "c2x86"))
		if err != nil {
			return nil, err
		}
		sb := sp.Sandbox
		return c2x86.New(c2x86.Config{
			Sandbox:  r,
			CacheDir: cache,
			RunLimits: sandboxes.Limits{
				Wall: sb.WallTime.D(), CPU: sb.CPUTime.D(), Memory: int64(sb.MemoryMB) << 20,
				Procs: int64(sb.Processes), Output: int64(sb.OutputKB) << 10, FileSize: int64(sb.FileSizeMB) << 20,
			},
			Logger: w.log,
		})
	}
	if sp.Lane == cudasynth.LaneName {
		return w.cudaLane(context.Background())
	}
	return nil, fmt.Errorf("lane %q is not available in this build (have %s)", sp.Lane, strings.Join(lanes, ", "))
}

// plan builds everything needed to run a campaign of sp.
func (w *wiring) plan(ctx context.Context, sp *spec.Spec) (*engine.Plan, error) {
	lane, err := w.lane(sp)
	if err != nil {
		return nil, err
	}
	solvers := solverSpec(sp) // a dedicated synthesiser does not solve
	model, err := buildPool(ctx, solvers, w.e.getenv, w.httpClient)
	if err != nil {
		return nil, err
	}
	mode := agent.ToolMode(solvers.Models[0].Tools)
	for _, m := range solvers.Models[1:] {
		if agent.ToolMode(m.Tools) != mode {
			return nil, fmt.Errorf("models[%s].tools: all endpoints of a campaign must use the same tools mode (%s)", m.Name, mode)
		}
	}
	var toolNames []string
	if mode != agent.ToolsNone && sp.Agent.MaxToolCalls > 0 {
		for _, t := range lane.Tools(tools.Item{Lane: sp.Lane}) {
			toolNames = append(toolNames, t.Name())
		}
	}
	if sp.Lane == cudasynth.LaneName {
		return w.cudaPlan(ctx, sp, lane, model, mode, toolNames)
	}
	system, err := prompts.Render(sp.Lane, "system", prompts.SystemData{Tools: toolNames})
	if err != nil {
		return nil, fmt.Errorf("system prompt: %w", err)
	}
	items, err := corpusItems(sp)
	if err != nil {
		return nil, err
	}
	maxTools := sp.Agent.MaxToolCalls
	if mode == agent.ToolsNone || maxTools == 0 {
		maxTools = -1 // no tools offered
	}
	var refine *engine.Refine
	if sp.Refinement.Rounds > 0 {
		if refine, err = w.refine(ctx, sp, lane, items); err != nil {
			return nil, err
		}
	}
	return &engine.Plan{
		Lane: lane, Model: model, ToolMode: mode, Sampling: sp.Sampling.Agent(),
		System: system,
		Repair: func(v tools.Verdict) string {
			s, err := prompts.Render(sp.Lane, "repair", prompts.RepairData{Diagnostic: v.Diagnostic, Class: string(v.Class)})
			if err != nil {
				return agent.RepairPrompt(v)
			}
			return s
		},
		RepairTurns: sp.Agent.RepairTurns, MaxToolCalls: maxTools,
		Concurrency: sp.Concurrency,
		Tasks:       func() ([]runs.Task, error) { return tasksFromItems(sp, items) },
		MaxTasks:    sp.Budgets.Tasks, MaxTokens: sp.Budgets.Tokens, MaxWall: sp.Budgets.WallTime.D(),
		Toolchain: w.toolchain(), Policy: w.policy(),
		Refine: refine,
	}, nil
}

// corpusItems loads and filters the spec's corpus.
func corpusItems(sp *spec.Spec) ([]prompts.CorpusItem, error) {
	if sp.Tasks.Templates != nil {
		return nil, fmt.Errorf("tasks.templates: lane %s takes a corpus, not templates", sp.Lane)
	}
	var (
		items []prompts.CorpusItem
		err   error
	)
	if sp.Tasks.Corpus == "" || sp.Tasks.Corpus == "builtin" {
		items, err = prompts.LoadBuiltinCorpus(sp.Lane)
	} else {
		items, err = prompts.LoadCorpus(os.DirFS(sp.Tasks.Corpus), ".", sp.Lane)
	}
	if err != nil {
		return nil, fmt.Errorf("tasks.corpus: %w", err)
	}
	if cats := sp.Tasks.Categories; len(cats) > 0 {
		known, _ := prompts.Categories(sp.Lane)
		for _, c := range cats {
			if !slices.Contains(known, c) {
				return nil, fmt.Errorf("tasks.categories: unknown category %q (known: %s)", c, strings.Join(known, ", "))
			}
		}
		items = slices.DeleteFunc(items, func(it prompts.CorpusItem) bool {
			return !slices.ContainsFunc(cats, it.HasCategory)
		})
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("tasks: no corpus item left after the category filter")
	}
	if n := sp.Tasks.Limit; n > 0 && n < len(items) {
		items, err = prompts.Sample(items, n, sp.Tasks.Seed, nil)
		if err != nil {
			return nil, fmt.Errorf("tasks.limit: %w", err)
		}
	}
	return items, nil
}

// tasksFromItems renders round 0's tasks: samples_per_task tasks per item.
func tasksFromItems(sp *spec.Spec, items []prompts.CorpusItem) ([]runs.Task, error) {
	var out []runs.Task
	for _, it := range items {
		user, err := prompts.Render(sp.Lane, "user", prompts.UserData{Function: it.Function, Source: it.Files["function.c"]})
		if err != nil {
			return nil, fmt.Errorf("render task %s: %w", it.ID, err)
		}
		for k := 0; k < sp.Tasks.SamplesPerTask; k++ {
			out = append(out, runs.Task{
				Round: 0, Key: fmt.Sprintf("r0/%s#%d", it.ID, k), Lane: sp.Lane,
				Files: it.Files, Meta: map[string]string{"function": it.Function, "item": it.ID},
				Categories: it.Categories, Prompt: user,
			})
		}
	}
	return out, nil
}
