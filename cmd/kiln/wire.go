package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/refinement/rounds"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/models"
	"github.com/kiln-dev/kiln/runs/records"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// laneNames are the lanes this binary runs end to end (tools/lanes).
func laneNames() []string {
	var out []string
	for _, k := range lanes.Kits() {
		out = append(out, k.Name)
	}
	slices.Sort(out)
	return out
}

func specOptions(dir string) spec.Options {
	return spec.Options{Lanes: laneNames(), Dir: dir, CheckPaths: true}
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
	// slotsPerDevice is kiln worker --slots-per-device: evaluations at
	// once on each GPU for lanes that share one (0: the lane's default).
	slotsPerDevice int
	// gpuDevices is kiln worker --gpus: the first N GPUs (0: all).
	gpuDevices int
	// cgroupParent is sandboxes.Config.CgroupParent.
	cgroupParent string
	// recordData is the data folder whose run database tasks.from_campaign
	// and lane commands read records from, when it is not data (lane
	// commands run with a scratch data folder); "" means data.
	recordData string
	// recs reads tasks.from_campaign's records (runs/records); made on first
	// use, its store closed by close.
	recs *records.Reader
	// metrics is sandboxes.Config.Metrics (compile caches, GPU slots);
	// nil: none.
	metrics sandboxes.Metrics

	mu        sync.Mutex
	kits      *kit.Registry
	runner    *sandboxes.Runner
	caps      string
	reg       *toolchain.Registry
	regProbed bool
	// probed are the openai base URLs already asked whether they are an
	// Ollama server (once per process: plan runs every refinement round).
	probed map[string]bool
}

// unprobed is sp with only the models whose base URL no earlier plan has
// checked for an Ollama server (models.OllamaWarnings).
func (w *wiring) unprobed(sp *spec.Spec) *spec.Spec {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.probed == nil {
		w.probed = map[string]bool{}
	}
	out := *sp
	out.Models = nil
	for _, m := range sp.Models {
		if !w.probed[m.BaseURL] {
			w.probed[m.BaseURL] = true
			out.Models = append(out.Models, m)
		}
	}
	return &out
}

// close releases the sandbox runner (its scratch and cgroups) and closes
// the store records were read from, if any.
func (w *wiring) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recs != nil {
		if err := w.recs.Close(); err != nil {
			w.log.Warn("close the store records were read from", "err", err)
		}
	}
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
	r, err := sandboxes.NewForData(w.data, sandboxes.Config{Logger: w.log,
		ReadOnlyPaths: reg.SandboxPaths(), AllowMissing: w.allowMissing, CgroupParent: w.cgroupParent, Metrics: w.metrics})
	if err != nil {
		return nil, err
	}
	w.runner = r
	w.caps = r.Capabilities().String()
	return r, nil
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
	return reg.Recorded()
}

// lanes returns the lane kits, checked and compiled once.
func (w *wiring) lanes() (*kit.Registry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kits == nil {
		r, err := lanes.Registry()
		if err != nil {
			return nil, fmt.Errorf("lanes: %w", err)
		}
		w.kits = r
	}
	return w.kits, nil
}

// kit returns the kit of lane.
func (w *wiring) kit(lane string) (*kit.Kit, error) {
	r, err := w.lanes()
	if err != nil {
		return nil, err
	}
	return r.Lookup(lane)
}

// host is what lanes may use of this host.
func (w *wiring) host() kit.Host {
	data, err := filepath.Abs(w.data)
	if err != nil {
		data = w.data
	}
	return kit.Host{Sandbox: w.sandbox, Toolchains: w.registry, DataDir: data, Log: w.log, Records: w.records()}
}

// lane builds sp's lane with the spec's sandbox limits.
func (w *wiring) lane(ctx context.Context, sp *spec.Spec) (tools.Lane, error) {
	k, err := w.kit(sp.Lane)
	if err != nil {
		return nil, err
	}
	if _, err := w.sandbox(); err != nil {
		return nil, err
	}
	h := w.host()
	if n := sp.GPU.SlotsPerDevice; n > 1 {
		if !k.SharesGPU {
			return nil, fmt.Errorf("gpu.slots_per_device: lane %s runs one evaluation per GPU at a time (only 1 is allowed), got %d", sp.Lane, n)
		}
		h.SlotsPerDevice = n
	}
	if n := sp.GPU.Devices; n > 0 {
		if !k.SharesGPU {
			return nil, fmt.Errorf("gpu.devices: lane %s does not spread its work over GPUs (leave it 0), got %d", sp.Lane, n)
		}
		h.GPUDevices = n
	}
	return k.Open(ctx, h, sp.Sandbox.Limits())
}

// kitTasks is the spec's tasks section as lanes read it.
func kitTasks(sp *spec.Spec) kit.Tasks {
	t := sp.Tasks
	out := kit.Tasks{Corpus: t.Corpus, FromCampaign: t.FromCampaign, Categories: t.Categories, Limit: t.Limit, Seed: t.Seed,
		SamplesPerTask: t.SamplesPerTask, Benchmarks: sp.Curation.Benchmarks}
	if t.Templates != nil {
		out.Templates = &kit.Templates{Dir: t.Templates.Dir, Pools: t.Templates.Pools}
	}
	return out
}

// plan builds everything needed to run a campaign of sp.
func (w *wiring) plan(ctx context.Context, sp *spec.Spec) (*engine.Plan, error) {
	k, err := w.kit(sp.Lane)
	if err != nil {
		return nil, err
	}
	lane, err := w.lane(ctx, sp)
	if err != nil {
		return nil, err
	}
	solvers := rounds.SolverSpec(sp) // a dedicated synthesiser does not solve
	model, err := models.Pool(ctx, solvers, w.e.getenv, w.httpClient)
	if err != nil {
		return nil, err
	}
	for _, warn := range models.OllamaWarnings(ctx, w.unprobed(sp), w.httpClient) {
		w.log.Warn(warn)
	}
	mode, err := solvers.ToolMode()
	if err != nil {
		return nil, err
	}
	var toolNames []string
	if mode != agent.ToolsNone && sp.Agent.MaxToolCalls > 0 {
		for _, t := range lane.Tools(tools.Item{Lane: sp.Lane}) {
			toolNames = append(toolNames, t.Name())
		}
	}
	if sp.Tasks.Corpus == spec.CorpusBench && k.Bench == nil {
		return nil, fmt.Errorf("tasks.corpus: lane %s has no bench set (lanes with one: %s)", sp.Lane, strings.Join(reg0(w).BenchLanes(), ", "))
	}
	tasks, err := w.tasks(ctx, sp, k)
	if err != nil {
		return nil, err
	}
	set, err := k.Source(tasks)
	if err != nil {
		return nil, err
	}
	system, err := k.System(tasks, toolNames)
	if err != nil {
		return nil, fmt.Errorf("system prompt: %w", err)
	}
	maxTools := sp.Agent.MaxToolCalls
	if mode == agent.ToolsNone || maxTools == 0 {
		maxTools = -1 // no tools offered
	}
	reg, err := w.lanes()
	if err != nil {
		return nil, err
	}
	labels := engine.Labels{Labeler: reg.Rules().Labeler()}
	if k.Domain != nil {
		if labels.Domain, err = k.Domain(tasks); err != nil {
			return nil, err
		}
	}
	var refine *engine.Refine
	if sp.Refinement.Rounds > 0 {
		if refine, err = w.refine(ctx, sp, k, lane, set); err != nil {
			return nil, err
		}
	}
	return &engine.Plan{
		Lane: lane, Model: model, ToolMode: mode, Sampling: sp.Sampling.Agent(),
		System: system, Repair: k.RepairPrompt,
		RepairTurns: sp.Agent.RepairTurns, MaxToolCalls: maxTools,
		Concurrency: sp.Concurrency,
		Tasks:       func() ([]runs.Task, error) { return set.Round0, nil },
		MaxTasks:    sp.Budgets.Tasks, MaxTokens: sp.Budgets.Tokens, MaxWall: sp.Budgets.WallTime.D(),
		Toolchain: w.toolchain(), Policy: w.policy(),
		Refine: refine, Labels: labels,
	}, nil
}

// reg0 is w's lane registry, or nil when it cannot be built.
func reg0(w *wiring) *kit.Registry {
	reg, err := w.lanes()
	if err != nil {
		return nil
	}
	return reg
}
