// Package torch2cuda is the PyTorch -> CUDA lane (ConCuR, KernelBench): a
// task is a KernelBench-format problem (class Model, get_inputs,
// get_init_inputs), an answer a Python module defining class ModelNew that
// builds custom CUDA kernels with torch.utils.cpp_extension.load_inline.
//
// Verification stages:
//
//   - extract: a Python answer defining ModelNew;
//   - static: static_check.py reads the module's syntax tree in the sandbox
//     (python3's ast; nothing runs): it parses, it calls
//     torch.utils.cpp_extension.load_inline or load (imports and aliases
//     resolved: `load_inline as build`, `ce.load_inline`,
//     `cpp_extension.load`, ...), and a string of it holds a __global__
//     function;
//   - problem-check (only when it fails): the problem's own check
//     (check.go, "judge.py check", cached by problem, judge and device):
//     the reference loads, runs and agrees with itself on the same inputs.
//     A problem that fails it is a task fault (tools.ClassReferenceError,
//     the diagnostic naming the reason: timeout, oom, crash,
//     nondeterministic, invalid), never the answer's failure; the lane is a
//     tools.TaskChecker, so the engine runs the check before any model
//     call. The check's figures set the evaluation's time and memory
//     limits;
//   - gpu-judge: judge/judge.py in the sandbox with the GPU: compile (cached
//     by content), correctness over several seeded trials with a
//     magnitude-aware tolerance, inputs unmodified, a stream-discipline
//     trial (kernels on PyTorch's current stream or on the legacy default
//     stream pass, with the finding kept as MeasureStreamCurrent; kernels on
//     a stream of their own fail), anti-cheat checks (no custom kernel
//     launched, torch fallback, results cached across calls, unsynchronised
//     side streams, timing tampering), then timing with CUDA events and L2
//     flushes against the reference in the same process. A correct answer
//     passes, faster than PyTorch or not: its speedup and MeasureFast are
//     reported beside it. A
//     reference that fails there (before any candidate code ran) is a task
//     fault too, once the GPU has passed its health probe (health.go).
//
// On a host without an NVIDIA GPU (or without a CUDA build of torch) the
// gpu-judge stage is skipped: the verdict is pending, the candidate kept
// as an artifact, and Complete (kiln rescore --pending on a GPU host)
// judges it from the stored record.
//
// Refinement synthesises new problems for the families a model fails
// (synth.go: the prompt, with briefs drawn from synth/pools.json, and the
// parse of a reply) and validates each before any model sees it
// (synthcheck.go: problem_check.py's syntax-tree check, then the problem
// check and its screen: returns_input, nonfinite_output, trivial_output,
// too_large). Near duplicates of the corpus, of earlier rounds and of the
// spec's benchmark folders are dropped by refinement.Screen
// (Identity.Near over problemTokens; benchmarkTasks). On a host that
// cannot judge on a GPU the check runs on the CPU and the validation is
// pending (refinement.ErrPending).
package torch2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// LaneName is the lane's name in specs and records.
const LaneName = "torch2cuda"

// Stages.
const (
	StageExtract = "extract"
	StageStatic  = "static"
	StageJudge   = "gpu-judge"
)

// Failure classes besides tools' own (compile_error, timeout, wrong_output).
const (
	ClassRuntimeError      tools.FailureClass = "runtime_error"
	ClassIllegalMemory     tools.FailureClass = "illegal_memory"
	ClassWrongShape        tools.FailureClass = "wrong_shape"
	ClassNaN               tools.FailureClass = "nan"
	ClassSuspectedCheating tools.FailureClass = "suspected_cheating"
)

// Stream-discipline findings of the judge (judge/README.md, step 5): the
// candidate's kernels are ordered with PyTorch's current stream
// (at::cuda::getCurrentCUDAStream), with the legacy default stream
// (`kernel<<<grid, block>>>`: right in KernelBench's setting, a pass), or
// with neither (a stream of their own: wrong_output).
const (
	StreamCurrent       = "current"
	StreamLegacyDefault = "legacy_default"
	StreamSide          = "side"
)

// Measurements of the judge besides its figures (speedup, t_ref_ms, ...).
const (
	// MeasureFast is 1 when the speedup over PyTorch is above 1, else 0
	// (absent when not timed). Correct answers pass either way.
	MeasureFast = "fast"
	// MeasureStreamCurrent is 1 when the kernels run on PyTorch's current
	// stream, 0 when on the legacy default stream or a side stream; absent
	// when the stream trial did not run (on the CPU, or a trial failed
	// before it). Curation reads it (curation.stream).
	MeasureStreamCurrent = "stream_current"
)

// Task files and artifacts.
const (
	// ReferenceFile is the problem's source in a task's files.
	ReferenceFile = "reference.py"
	// ArtifactCandidate is the answer as judged (for Complete).
	ArtifactCandidate = "candidate.py"
	// ArtifactJudge is the judge's full JSON result.
	ArtifactJudge = "judge.json"
)

// Tolerance modes of the judge.
const (
	ToleranceMagnitude   = "magnitude"   // atol relative to the reference's scale (default)
	ToleranceKernelBench = "kernelbench" // KernelBench's atol = rtol = 1e-2
)

// Config configures the lane.
type Config struct {
	Sandbox    *sandboxes.Runner
	Toolchains *toolchain.Registry
	// Trials is the number of seeded correctness trials (default 5).
	Trials int
	// Seed is the first trial's seed (default 42).
	Seed int
	// Tolerance is ToleranceMagnitude (default) or ToleranceKernelBench.
	Tolerance string
	// Timeout bounds one candidate's build (default 10 min).
	Timeout time.Duration
	// RunTimeout is the floor of the time one evaluation on the GPU may
	// take once built: the candidate's trials, anti-cheat checks and
	// timing (default 45 s); the reference stage before them gets as
	// much again (plus twice the time the problem check took to build the
	// reference), never charged to the candidate. A hung kernel costs it.
	// The time given is RunTimeoutScale times the reference's cost
	// measured by the problem check (a forward plus an input draw), at
	// least RunTimeout and at most MaxRunTimeout.
	RunTimeout time.Duration
	// RunTimeoutScale: see RunTimeout (default 200: an evaluation runs the
	// reference about 70 times, the candidate as often).
	RunTimeoutScale float64
	// MaxRunTimeout caps the derived run timeout (default 15 min).
	MaxRunTimeout time.Duration
	// CheckTimeout bounds one problem's check (default 3 min): judge.py
	// check before a problem's first candidate (and, through
	// tools.TaskChecker, before the first model call): load, build, draw
	// the inputs, two runs compared, a few timed. A problem that fails it
	// is a task fault (tools.ClassReferenceError). Checks are cached by
	// problem, judge and device in CacheDir/checks.
	CheckTimeout time.Duration
	// MaxJudgeRSS caps the judge's host memory (default 110 GiB). A judge
	// batch gets 16 GiB plus 6 GiB per parallel evaluation, or
	// RSSScale times the largest peak resident memory that its problems'
	// checks measured, whichever is more, up to MaxJudgeRSS. Problem
	// checks get MaxJudgeRSS.
	MaxJudgeRSS int64
	// RSSScale: see MaxJudgeRSS (default 3).
	RSSScale float64
	// GPUSlots bounds the judge processes that run at once (default 1);
	// slot i judges on GPU i mod GPUs, so GPUSlots = 2*GPUs puts two on
	// each GPU.
	GPUSlots int
	// GPUs is the number of GPUs to judge on (default 1).
	GPUs int
	// SlotsPerDevice is how many evaluations one judge process runs at
	// once on its GPU (default 1; at most 8). Above 1 they share the GPU
	// but time alone on it (judge.py --exclusive-timing: a child holds its
	// device shared while it evaluates and exclusively while it times,
	// and its clock stops while it waits), each may hold 1/N of the GPU
	// memory budget, and the batch's memory bound grows N-fold. With
	// Device "cpu" the evaluations share the CPU the same way.
	SlotsPerDevice int
	// Device "cpu" judges on the CPU (candidates with CPU extensions:
	// tests, experiments; timings are then CPU timings); "" judges on
	// the GPU, and leaves the judge stage pending on a host without one.
	Device string
	// CompileParallel bounds the extension builds that run at once on the
	// CPU cores, each in a sandbox of its own (default 8).
	CompileParallel int
	// MaxBatch bounds the evaluations of one GPU batch (default 16): a
	// batch's verdicts are delivered when it ends.
	MaxBatch int
	// OneShotJudge starts a judge process per GPU batch and per build, as
	// before issue 23; by default a slot's batches go to one long-lived
	// judge process (serve.go) and a compile slot's builds to one long-lived
	// build process (buildserve.go).
	OneShotJudge bool
	// ProbeTimeout bounds one GPU health probe (default 90 s): "judge.py
	// probe --devices G" in a sandbox with the GPU, a matmul checked
	// against the CPU. A GPU is probed when a batch on it ends badly (the
	// judge process died, was killed or gave no result; or a result shows
	// a failure before any candidate code ran, or a device-level CUDA
	// error). A GPU that fails its probe is quarantined: its slots take no
	// more work, and the batch's evaluations that got no real verdict go
	// back to the front of the queue, at most twice each (the third time
	// they fail: such a candidate may be what breaks GPUs). A hung probe
	// fails. Not used with Device "cpu".
	ProbeTimeout time.Duration
	// ReprobeInterval is how long a quarantined GPU rests before it is
	// probed again, when work is waiting (default 5 min); healthy, it
	// returns to service. While every GPU is quarantined and none is being
	// probed, evaluations fail at once with an error that wraps
	// ErrGPUQuarantined and gives each GPU's probe failure.
	ReprobeInterval time.Duration
	// CacheDir keeps built extensions by candidate ("" keeps none).
	CacheDir string
	// PCH: precompiled torch/extension.h headers for the extensions'
	// pybind modules, kept under CacheDir (pch.go): PCHAuto (on when
	// judging on a GPU), PCHOn, PCHOff.
	PCH string
	// StaticLimits bound the static check's python3 run.
	StaticLimits sandboxes.Limits
	// Synth bounds synthesised problems (synthcheck.go).
	Synth  SynthLimits
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Trials == 0 {
		c.Trials = 5
	}
	if c.Seed == 0 {
		c.Seed = 42
	}
	if c.Tolerance == "" {
		c.Tolerance = ToleranceMagnitude
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.RunTimeout == 0 {
		c.RunTimeout = 45 * time.Second
	}
	if c.RunTimeoutScale == 0 {
		c.RunTimeoutScale = 200
	}
	if c.MaxRunTimeout == 0 {
		c.MaxRunTimeout = 15 * time.Minute
	}
	if c.CheckTimeout == 0 {
		c.CheckTimeout = 3 * time.Minute
	}
	if c.MaxJudgeRSS == 0 {
		c.MaxJudgeRSS = 110 << 30
	}
	if c.RSSScale == 0 {
		c.RSSScale = 3
	}
	if c.GPUSlots == 0 {
		c.GPUSlots = 1
	}
	if c.GPUs == 0 {
		c.GPUs = 1
	}
	if c.SlotsPerDevice == 0 {
		c.SlotsPerDevice = 1
	}
	if c.CompileParallel == 0 {
		c.CompileParallel = 8
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 16
	}
	if c.ProbeTimeout == 0 {
		c.ProbeTimeout = 90 * time.Second
	}
	if c.ReprobeInterval == 0 {
		c.ReprobeInterval = 5 * time.Minute
	}
	if c.StaticLimits == (sandboxes.Limits{}) {
		c.StaticLimits = sandboxes.Limits{Wall: 30 * time.Second, CPU: 20 * time.Second, Memory: 1 << 30, Procs: 16,
			FileSize: 16 << 20, Output: 64 << 10, RSS: 512 << 20}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case c.Sandbox == nil:
		return errors.New("torch2cuda: no sandbox")
	case c.Toolchains == nil:
		return errors.New("torch2cuda: no toolchain registry")
	case c.Trials < 1 || c.Trials > 100:
		return fmt.Errorf("torch2cuda: trials %d: want 1-100", c.Trials)
	case c.Tolerance != ToleranceMagnitude && c.Tolerance != ToleranceKernelBench:
		return fmt.Errorf("torch2cuda: tolerance %q: want %s or %s", c.Tolerance, ToleranceMagnitude, ToleranceKernelBench)
	case c.Device != "" && c.Device != "cpu":
		return fmt.Errorf("torch2cuda: device %q: want \"\" (the GPU) or cpu", c.Device)
	case c.PCH != PCHAuto && c.PCH != PCHOn && c.PCH != PCHOff:
		return fmt.Errorf("torch2cuda: pch %q: want \"\" (auto), on or off", c.PCH)
	case c.Timeout < time.Second || c.RunTimeout < time.Second || c.GPUSlots < 0 || c.GPUs < 0 || c.CompileParallel < 0 || c.MaxBatch < 0:
		return errors.New("torch2cuda: timeout under a second or negative GPU slots")
	case c.SlotsPerDevice < 0 || c.SlotsPerDevice > MaxSlotsPerDevice:
		return fmt.Errorf("torch2cuda: slots per device %d: want 1-%d", c.SlotsPerDevice, MaxSlotsPerDevice)
	case c.ProbeTimeout < time.Second || c.ReprobeInterval < 0:
		return errors.New("torch2cuda: probe timeout under a second or negative reprobe interval")
	case c.RunTimeoutScale < 0 || c.RSSScale < 0 || c.MaxJudgeRSS < 1<<30:
		return fmt.Errorf("torch2cuda: run timeout scale %g, RSS scale %g: want >= 0; max judge RSS %d: want >= 1 GiB",
			c.RunTimeoutScale, c.RSSScale, c.MaxJudgeRSS)
	case c.MaxRunTimeout < c.RunTimeout || c.CheckTimeout < time.Second:
		return fmt.Errorf("torch2cuda: max run timeout %s under the run timeout %s, or check timeout %s under a second",
			c.MaxRunTimeout, c.RunTimeout, c.CheckTimeout)
	}
	return nil
}

// MaxSlotsPerDevice bounds Config.SlotsPerDevice.
const MaxSlotsPerDevice = 8

// Lane is the torch2cuda verifier.
type Lane struct {
	cfg      Config
	batches  *batcher
	servers  servers    // idle judge processes (serve.go)
	builders builders   // idle build processes (buildserve.go)
	checkq   checkQueue // problem checks not in the cache (check.go)
	// compileRun builds a candidate in place of compile (a fake in tests).
	compileRun func(ctx context.Context, ref, cand, arch string) (map[string][]byte, error)
	// checkRun checks problems with the judge (runChecks; a fake in tests).
	checkRun func(ctx context.Context, refs []string) ([]ProblemCheck, error)
	archOnce sync.Once
	archList string
	pch      pchState
}

var (
	_ tools.Lane        = (*Lane)(nil)
	_ tools.Completer   = (*Lane)(nil)
	_ tools.TaskChecker = (*Lane)(nil)
)

// New returns a lane.
func New(cfg Config) (*Lane, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Lane{cfg: cfg}
	l.batches = newBatcher(l)
	l.checkRun = l.runChecks
	return l, nil
}

// Name implements tools.Lane.
func (l *Lane) Name() string { return LaneName }

// Close stops reporting the lane's GPU slots to the sandbox runner's
// metrics (the campaign using the lane has ended). Idempotent.
func (l *Lane) Close() error {
	l.batches.closeSlots()
	l.stopServers()
	l.stopBuilders()
	return nil
}

// Tools implements tools.Lane: none yet (the model answers directly).
func (l *Lane) Tools(tools.Item) []tools.Tool { return nil }

// Extract implements tools.Lane: the last fenced Python block that defines
// ModelNew, else the last Python block.
func (l *Lane) Extract(text string) (string, bool) { return ExtractAnswer(text) }

// ExtractAnswer is Extract without a lane.
func ExtractAnswer(text string) (string, bool) {
	var last, withModel string
	for _, f := range tools.Fences(text) {
		switch strings.ToLower(f.Lang) {
		case "python", "py", "python3", "":
		default:
			continue
		}
		if strings.TrimSpace(f.Body) == "" {
			continue
		}
		last = f.Body
		if modelNewRE.MatchString(f.Body) {
			withModel = f.Body
		}
	}
	if withModel != "" {
		return strings.TrimSpace(withModel) + "\n", true
	}
	if last != "" {
		return strings.TrimSpace(last) + "\n", true
	}
	return "", false
}

var modelNewRE = regexp.MustCompile(`(?m)^class\s+ModelNew\b`)

// staticFacts are what static_check.py reads from a candidate's syntax
// tree (see that file): the syntax error, the calls that build an
// extension (imports and aliases resolved), and where __global__ appears.
type staticFacts struct {
	SyntaxError *string `json:"syntax_error"`
	Builds      []struct {
		Call string `json:"call"`
		Line int    `json:"line"`
		As   string `json:"as"`
	} `json:"builds"`
	ImportsCppExtension bool `json:"imports_cpp_extension"`
	GlobalInStrings     bool `json:"global_in_strings"`
	GlobalInText        bool `json:"global_in_text"`
}

// suspicion is why an answer with these facts cannot be a custom kernel
// ("" when it may be): it calls no torch.utils.cpp_extension builder, or
// (with cuda) no string of it holds a __global__ function. Without cuda
// (Config.Device "cpu") a C++ extension is enough.
func (f staticFacts) suspicion(cuda bool) string {
	var why []string
	if len(f.Builds) == 0 {
		w := "builds no extension (no call of torch.utils.cpp_extension.load_inline or load"
		if f.ImportsCppExtension {
			w += ": the module names cpp_extension but never calls a builder"
		}
		why = append(why, w+")")
	}
	if cuda && !f.GlobalInStrings {
		w := "defines no __global__ CUDA kernel"
		if f.GlobalInText {
			w += " (__global__ appears only outside string literals: comments)"
		}
		why = append(why, w)
	}
	return strings.Join(why, "; ")
}

// detail is the static stage's detail: the build calls found.
func (f staticFacts) detail() string {
	var calls []string
	for _, b := range f.Builds {
		c := fmt.Sprintf("%s (line %d", b.Call, b.Line)
		if b.As != "" && b.As != b.Call {
			c += ", as " + clip(b.As, 60)
		}
		calls = append(calls, c+")")
	}
	if len(calls) > 4 {
		calls = append(calls[:4], fmt.Sprintf("%d more", len(calls)-4))
	}
	return "builds: " + strings.Join(calls, ", ")
}

// staticSuspicion is the refinement taxonomy's check of a stored answer,
// in Go without a sandbox: it flags only what cannot build a custom
// kernel in any form: an answer that never names torch.utils.cpp_extension
// (every way to reach load_inline or load does), or, without __global__
// anywhere, that defines no kernel. The verifier's own check is the
// syntax-tree one (staticFacts.suspicion), which resolves imports and
// aliases.
func staticSuspicion(answer string) string {
	var why []string
	if !strings.Contains(answer, "cpp_extension") {
		why = append(why, "builds no extension (torch.utils.cpp_extension is never named)")
	}
	if !strings.Contains(answer, "__global__") {
		why = append(why, "defines no __global__ CUDA kernel")
	}
	return strings.Join(why, "; ")
}

// Verify implements tools.Lane.
func (l *Lane) Verify(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	ref := item.Files[ReferenceFile]
	if strings.TrimSpace(ref) == "" {
		return tools.Verdict{}, fmt.Errorf("torch2cuda: %w: no %s", tools.ErrBadItem, ReferenceFile)
	}
	v := &verdict{v: tools.Verdict{Artifacts: map[string][]byte{}, Measurements: map[string]float64{}}}
	if !modelNewRE.MatchString(answer) {
		return v.fail(StageExtract, tools.ClassNoAnswer, 0,
			"no ModelNew found: answer with one ```python block defining class ModelNew(nn.Module)"), nil
	}
	v.ok(StageExtract, 0, "")
	v.v.Artifacts[ArtifactCandidate] = []byte(answer)
	start := time.Now()
	facts, err := l.staticCheck(ctx, answer)
	if err != nil {
		return tools.Verdict{}, err
	}
	if facts.SyntaxError != nil {
		return v.fail(StageStatic, tools.ClassCompileError, time.Since(start), *facts.SyntaxError), nil
	}
	if why := facts.suspicion(l.cfg.Device != "cpu"); why != "" {
		v.v.Suspicion = []string{why}
		return v.fail(StageStatic, ClassSuspectedCheating, time.Since(start), "not a custom CUDA kernel: "+why), nil
	}
	v.ok(StageStatic, time.Since(start), facts.detail())
	if why := l.cannotJudge(); why != "" {
		v.skip(StageJudge, "skipped: "+why+"; `kiln rescore --pending` on a GPU host judges the kept candidate")
		v.v.Pass, v.v.Stage = true, StageJudge
		return v.v, nil
	}
	return l.judgeInto(ctx, v, ref, answer)
}

// cannotJudge says why this host cannot run the judge ("" when it can).
func (l *Lane) cannotJudge() string {
	t, ok := l.cfg.Toolchains.Get(toolchain.Torch)
	switch {
	case !ok:
		return "no python3 with torch on this host"
	case l.cfg.Device == "cpu":
		return ""
	case strings.Contains(t.Version, "cuda none"):
		return "torch here has no CUDA (" + t.Version + ")"
	case !l.cfg.Toolchains.GPU().Present:
		return "no NVIDIA GPU on this host"
	}
	return ""
}

// Complete implements tools.Completer: it judges the candidate kept with a
// pending verdict, on this (GPU) host.
func (l *Lane) Complete(ctx context.Context, item tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	pending := tools.PendingStages(prev)
	if len(pending) == 0 {
		return prev, nil
	}
	if len(pending) != 1 || pending[0] != StageJudge {
		return tools.Verdict{}, fmt.Errorf("torch2cuda complete: cannot complete pending stages %s", strings.Join(pending, ", "))
	}
	if why := l.cannotJudge(); why != "" {
		return tools.Verdict{}, fmt.Errorf("torch2cuda complete: cannot judge here (%s): run it on a GPU host with a CUDA build of torch", why)
	}
	cand := string(prev.Artifacts[ArtifactCandidate])
	ref := item.Files[ReferenceFile]
	if strings.TrimSpace(cand) == "" || strings.TrimSpace(ref) == "" {
		return tools.Verdict{}, fmt.Errorf("torch2cuda complete: the record keeps no %s or its task no %s", ArtifactCandidate, ReferenceFile)
	}
	v := &verdict{v: tools.Verdict{Artifacts: map[string][]byte{ArtifactCandidate: []byte(cand)}, Measurements: map[string]float64{}}}
	for _, s := range prev.Stages {
		if !s.Skipped {
			v.v.Stages = append(v.v.Stages, s)
		}
	}
	return l.judgeInto(ctx, v, ref, cand)
}

// judgeInto checks the problem (cached), runs the judge within the limits
// the check sets, and adds its stage, measurements and class. A problem
// that fails its check, or whose reference fails in the judge, gives a
// task fault (tools.ClassReferenceError), never the candidate's failure.
func (l *Lane) judgeInto(ctx context.Context, v *verdict, ref, cand string) (tools.Verdict, error) {
	start := time.Now()
	// The problem's check and the candidate's build run at once: the build
	// needs nothing of the check, and the first evaluations of a campaign's
	// new problems would otherwise wait for one and then the other. The
	// build is waited for even when the check fails: another evaluation of
	// the same candidate may share it (build's singleflight), and it is
	// cached.
	arch := l.arch(ctx)
	key := l.cacheKey(cand, arch)
	type buildOut struct {
		files map[string][]byte
		err   error
	}
	bc := make(chan buildOut, 1)
	go func() {
		files, err := l.build(ctx, key, ref, cand, arch)
		bc <- buildOut{files, err}
	}()
	chk, err := l.checkOne(ctx, ref)
	b := <-bc
	if err != nil {
		return tools.Verdict{}, err
	}
	if !chk.OK {
		fv := l.checkVerdict(chk)
		for k, b := range fv.Artifacts {
			v.v.Artifacts[k] = b
		}
		return v.fail(StageCheck, tools.ClassReferenceError, time.Since(start), fv.Diagnostic), nil
	}
	if b.err != nil {
		return tools.Verdict{}, b.err
	}
	res, raw, err := l.judgeBuilt(ctx, ref, cand, key, b.files, l.evalLimits(chk))
	if err != nil {
		return tools.Verdict{}, err
	}
	v.v.Artifacts[ArtifactJudge] = raw
	for k, x := range res.measurements() {
		v.v.Measurements[k] = x
	}
	v.v.Suspicion = res.Suspicion
	detail := res.detail()
	if res.Pass {
		v.ok(StageJudge, time.Since(start), detail)
		v.v.Pass, v.v.Stage = true, StageJudge
		return v.v, nil
	}
	class := tools.FailureClass(res.Class)
	if class == "" {
		class = ClassRuntimeError
	}
	diag := res.Diagnostic
	if res.RefError && !res.JudgeError {
		// Nothing of the candidate ran: the problem's fault (health.go has
		// probed the GPU, which is healthy, or the evaluation would have
		// been requeued).
		return v.fail(StageJudge, tools.ClassReferenceError, time.Since(start), refErrorDiag(res.RefReason, diag)), nil
	}
	if len(res.Suspicion) > 0 {
		diag = "suspected cheating: " + strings.Join(res.Suspicion, "; ") + "\n" + diag
	}
	return v.fail(StageJudge, class, time.Since(start), strings.TrimSpace(diag+"\n"+detail)), nil
}

// verdict builds a tools.Verdict stage by stage.
type verdict struct{ v tools.Verdict }

func (b *verdict) ok(stage string, d time.Duration, detail string) {
	b.v.Stages = append(b.v.Stages, tools.Stage{Name: stage, OK: true, Duration: d, Detail: detail})
	b.v.Stage = stage
}

func (b *verdict) skip(stage, detail string) {
	b.v.Stages = append(b.v.Stages, tools.Stage{Name: stage, Skipped: true, Detail: detail})
}

func (b *verdict) fail(stage string, class tools.FailureClass, d time.Duration, diag string) tools.Verdict {
	b.v.Stages = append(b.v.Stages, tools.Stage{Name: stage, Duration: d, Detail: firstLine(diag)})
	b.v.Stage, b.v.Class, b.v.Diagnostic, b.v.Pass = stage, class, clip(diag, 4000), false
	return b.v
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return clip(line, 300)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// jsonNumber is a judge figure that may be null.
type jsonNumber = *float64

// judgeResult is judge.py's JSON (the fields kiln reads; the whole object
// is kept as the judge.json artifact).
type judgeResult struct {
	Pass    bool       `json:"pass"`
	Class   string     `json:"class"`
	Correct bool       `json:"correct"`
	Speedup jsonNumber `json:"speedup"`
	// Fast: speedup > 1 (null when not timed).
	Fast *bool `json:"fast"`
	// Stream is the stream-discipline trial's finding: StreamCurrent,
	// StreamLegacyDefault, StreamSide, or "" when it did not run.
	Stream     string     `json:"stream"`
	TRefMS     jsonNumber `json:"t_ref_ms"`
	TNewMS     jsonNumber `json:"t_new_ms"`
	WallRefMS  jsonNumber `json:"wall_ref_ms"`
	WallNewMS  jsonNumber `json:"wall_new_ms"`
	MaxAbsErr  jsonNumber `json:"max_abs_err"`
	MaxRelErr  jsonNumber `json:"max_rel_err"`
	CompileMS  jsonNumber `json:"compile_ms"`
	Cached     bool       `json:"compile_cached"`
	Suspicion  []string   `json:"suspicion"`
	TorchOps   []string   `json:"torch_ops"`
	Diagnostic string     `json:"diagnostic"`
	TimingOn   string     `json:"timing_device"`
	Env        struct {
		Torch  string `json:"torch"`
		CUDA   string `json:"cuda"`
		Device string `json:"device"`
	} `json:"env"`
	// RefError: the reference failed (before any candidate code ran);
	// JudgeError: the judge's own code failed.
	RefError   bool `json:"reference_error"`
	JudgeError bool `json:"judge_error"`
	// RefReason is why the reference failed: timeout, oom, crash,
	// nondeterministic or invalid.
	RefReason string `json:"reference_reason"`
	// Build is what the candidate's extension build recorded (set by
	// kiln, not read from the judge's JSON).
	Build buildRecords `json:"-"`
}

func (r judgeResult) measurements() map[string]float64 {
	out := map[string]float64{}
	for k, p := range map[string]jsonNumber{"speedup": r.Speedup, "t_ref_ms": r.TRefMS, "t_new_ms": r.TNewMS,
		"wall_ref_ms": r.WallRefMS, "wall_new_ms": r.WallNewMS, "max_abs_err": r.MaxAbsErr, "max_rel_err": r.MaxRelErr,
		"compile_ms": r.CompileMS} {
		if p != nil {
			out[k] = *p
		}
	}
	if r.Build.N > 0 {
		out["build_ms"] = r.Build.MS
	}
	out["correct"] = 0
	if r.Correct {
		out["correct"] = 1
	}
	if r.Speedup != nil {
		out[MeasureFast] = 0
		if *r.Speedup > 1 {
			out[MeasureFast] = 1
		}
	}
	switch r.Stream {
	case StreamCurrent:
		out[MeasureStreamCurrent] = 1
	case StreamLegacyDefault, StreamSide:
		out[MeasureStreamCurrent] = 0
	}
	return out
}

func (r judgeResult) detail() string {
	var parts []string
	if r.Speedup != nil {
		parts = append(parts, fmt.Sprintf("speedup %.3gx (torch %.4g ms, kernel %.4g ms)", *r.Speedup, val(r.TRefMS), val(r.TNewMS)))
	}
	if r.Speedup != nil && *r.Speedup <= 1 && r.Correct {
		parts = append(parts, "correct but not faster than PyTorch")
	}
	if r.MaxAbsErr != nil {
		parts = append(parts, fmt.Sprintf("max abs err %.3g", *r.MaxAbsErr))
	}
	if r.Stream != "" {
		parts = append(parts, "stream: "+r.Stream)
	}
	if r.Env.Device != "" {
		parts = append(parts, "on "+r.Env.Device)
	}
	if r.Build.N > 0 {
		b := fmt.Sprintf("built in %.1f s", r.Build.MS/1000)
		if r.Build.Slim > 0 {
			b += " (CUDA source with " + r.Build.Header + ")"
		} else if r.Build.AsWritten > 0 {
			b += " (as written: the slimmer CUDA build failed)"
		}
		if r.Build.PCH > 0 {
			b += " (pybind module with the precompiled header)"
		}
		parts = append(parts, b)
	}
	return strings.Join(parts, ", ")
}

func val(p jsonNumber) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// parseJudge reads judge.py's JSON.
func parseJudge(raw []byte) (judgeResult, error) {
	var r judgeResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("torch2cuda: judge result: %w", err)
	}
	return r, nil
}
