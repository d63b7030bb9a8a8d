// Package ptx2cuda is the PTX -> CUDA decompilation lane (PtxDec): a task
// is the PTX of one CUDA kernel that kiln compiled itself (a corpus kernel
// in one of its compiler-made variants: knobs such as the block size,
// unroll factors and tile sizes, NVVM -O levels, fast math), shown to the
// model as Rolled-PTX (package rollptx) with the kernel's launch
// configuration and parameter shapes; the answer is the CUDA source of the
// kernel. It is judged the way PtxDec's evaluation does (section IV-A):
// the answer is compiled into the same generated harness as the original
// kernel, both run on the same inputs, and every output tensor must agree
// within a normalised absolute error of 1e-3.
//
// # Tasks
//
// A task's files are kernel.cu (the reference kernel, never shown to the
// model), kernel.ptx (the variant's raw PTX, as nvcc 11.8 prints it with
// -ptx -arch=compute_90 and the variant's flags) and harness.json (the
// resolved [HarnessSpec]: signature, buffer roles, element counts and
// fills, grid, block, dynamic shared bytes, nvcc flags). Corpora are
// folders of items (see [Meta] and corpus/README.md); their PTX is
// committed, made by `kiln ptx prepare --dir DIR` ([Lane.PreparePTX],
// [NormalizePTX]).
//
// # Stages
//
// In this order (the names are fixed; refinement keys on them):
//
//	extract   the answer: a ```cuda block with a __global__ function (blank:
//	            no_answer)
//	check     static checks: a __global__ function with the task's kernel name
//	            (compile_error otherwise), and no embedded PTX: inline asm of
//	            more than two instructions, PTX directives (.entry, .version,
//	            ...) in the source, module loading (cuModuleLoadData, NVRTC),
//	            or an #include of the task's files (embedded_ptx)
//	compile   nvcc -gencode arch=compute_90,code=sm_90 <variant flags> of the
//	            generated harness including the answer as kernel.cu, in the
//	            sandbox (compile_error; a kernel whose parameter types differ
//	            from the original's does not compile, since the harness takes
//	            its address as a function pointer of the original signature).
//	            The reference kernel is built the same way alongside; if it
//	            does not build, Verify returns an error wrapping
//	            tools.ErrBadItem (the task is bad, not the answer).
//	run       GPU hosts only: the reference and the answer executables run
//	            in one sandbox box, each writing its output buffers; a crash,
//	            a CUDA error (exit 1), a timeout or a limit fails the answer
//	            (crash, timeout, resource_limit). A reference that fails is
//	            an error wrapping tools.ErrBadItem.
//	compare   GPU hosts only: every out and inout buffer compared
//	            ([CompareOutputs]): NAE <= Config.Threshold (1e-3) for
//	            floating buffers, exact equality for integer ones, and no
//	            input modified (wrong_output otherwise). The answer's kernel
//	            time over the reference's is the latency ratio (each the
//	            fastest mean of 5 batches of Config.Reps launches, after the
//	            checked launch and 3 warm-up launches; CUDA events).
//
// Without a GPU, run and compare are recorded Skipped: the verdict is
// pending, keeps both executables and a GPU probe, and [Lane.Complete]
// finishes it on a GPU host (`kiln rescore --pending`) without a compiler.
//
// # Program tasks
//
// A program task's kernel is one __global__ function of a whole CUDA
// program, such as a verified cuda-synth record (`kiln ptx prepare
// --from-campaign NAME -o DIR`, [RecordItems]): the program's own main is
// the harness. Its files are program.cu (the program), kernel.cu (the
// kernel's definition as it stands there), kernel.ptx (the PTX of the
// kernel alone: the program compiled with every other kernel's definition
// made a declaration, so the PTX holds that one .entry, the device
// functions it calls and the program's device variables) and program.json
// ([ProgramSpec]: the kernel's name and the variant's flags). The prompt
// shows the Rolled-PTX, the signature and the program up to the kernel
// (comments removed, other kernels as declarations): what the kernel may
// use. The stages are the same, judged so:
//
//	check     as above, and no __constant__ or __device__ variable of the
//	            program defined again, no macro of the program defined
//	            otherwise or undefined (compile_error)
//	compile   the program with the answer in the kernel's place: the answer
//	            goes into namespace kiln_answer (its helpers may reuse the
//	            program's names) and `using kiln_answer::<kernel>` makes the
//	            program's launches call it; a pointer of the original
//	            kernel's type initialised with the answer's kernel makes other
//	            parameter types a compile error. Diagnostics name the
//	            answer's lines answer.cu(N). The original program and the
//	            program with the kernel's body emptied are built alongside
//	            (a build failure of either is tools.ErrBadItem).
//	run       GPU hosts only: the original program runs (it must exit 0 and
//	            print something, else tools.ErrBadItem), then the answer's
//	            (crash, timeout, resource_limit; a non-zero exit is a crash
//	            when stderr reports a CUDA error, else it is judged at
//	            compare: programs that check their results exit 1).
//	compare   GPU hosts only: the two outputs (stdout) agree line by line,
//	            numbers within cuda-synth's tolerance (relative 1e-4; numbers
//	            on timing lines ignored) and the exit status is 0, else
//	            wrong_output. When they agree, the program with the kernel
//	            emptied runs too: if its output agrees with the original's,
//	            the kernel's work does not show in what the program prints
//	            and the task is bad (an error wrapping tools.ErrBadItem),
//	            never a pass. No kernel time is measured (no latency_ratio);
//	            program_ms_answer and program_ms_reference are the runs' wall
//	            times, output_answer and output_reference what they printed.
//
// Pending verdicts keep the three executables (answer_binary,
// reference_binary, blank_binary) and program_spec; Complete runs them.
// Kernels no task is made of, and why: [SkipError] (template kernels, ones
// not at file scope, overloaded names, kernels nothing launches, inline
// PTX in the kernel, PTX that cannot be made alone, prompts over
// [MaxProgramPrompt], programs that printed nothing).
//
// # Torch program tasks
//
// A torch task's kernel is one __global__ function of the CUDA source of
// a verified torch2cuda record: the Python string literal its module
// builds with load_inline (`kiln ptx prepare --from-campaign` over a
// torch2cuda campaign, [TorchItems]). The module is the harness and the
// problem's Model the reference. Its files are answer.py (the module),
// reference.py (the problem), kernel.cu (the kernel's definition),
// kernel.ptx (the kernel alone, compiled with PyTorch's include folders
// and the record's extra_cuda_cflags) and torch.json ([TorchSpec]). The
// prompt (prompts/user_torch.tmpl) shows the Rolled-PTX, the signature and
// the CUDA source up to the kernel. Stages:
//
//	check     as a program task's (the CUDA source is the program)
//	compile   where the CUDA source before the kernel builds without
//	            PyTorch's headers (they are left out), nvcc builds the kernel
//	            spliced into it, a signature check included; else pending
//	            until the judge's build, which also decides when it fails
//	            after a standalone compile passed
//	run       hosts with a CUDA build of torch and a GPU: the module, its
//	            CUDA source with the answer spliced in (the namespace trick),
//	            runs under torch2cuda's judge (crash, timeout)
//	compare   its outputs match the reference Model's over the judge's
//	            seeded trials (wrong_output otherwise; the judge's
//	            suspicions fail it too). A correct module slower than
//	            PyTorch passes. nae_max is max |a-r| / max |r| from the
//	            judge's figures; speedup, model_ms_answer and model_ms_torch
//	            are the judge's; latency_ratio is the module's speedup with
//	            the original kernel (measured at prepare) over its speedup
//	            with the answer's: whole forwards, not the kernel alone.
//
// Elsewhere the judged stages are pending; the verdict keeps the rewritten
// module (harness_source) and Complete judges it. Prepare checks every
// kernel on the torch host: the module with the kernel's own definition
// spliced back in must pass, the module with the kernel emptied must not
// (not_observed). Skip reasons besides the program ones: no_cuda_source,
// several_cuda_sources, no_reference, no_torch, judge, not_observed.
//
// # Resynthesis
//
// Refinement rounds resample the corpus's variants and add synthesised
// kernels (resynth.go): the synthesiser writes a kernel.cu and its harness
// in the corpus's meta.json format (one variant); the parser checks them
// as the corpus loader checks an item (and the parameter types against the
// kernel's); the validator, a refinement.Preparer, compiles the kernel in
// the sandbox to PTX as a corpus variant's is made and builds it into its
// harness (compile only), and adds kernel.ptx and harness.json to the
// candidate; the task is rendered as a corpus variant's, with the
// candidate's category and meta origin "resynthesis". A task's identity
// (dedupe) is its PTX and harness without the input seed.
//
// # Metrics
//
// PtxDec's functional metrics are stage pass rates over attempts:
// compile rate = attempts whose compile stage passed; runtime-correct rate
// = attempts whose run stage passed (both programs ran without error);
// I/O-correct rate = attempts whose compare stage passed (= passing
// verdicts). Measurements: compile_ms and reference_compile_ms (the
// original compile's time when cached), kernel_ms_answer,
// kernel_ms_reference, latency_ratio (answer / reference: the scheduling
// consistency figure), nae_max (over the buffers; 1e308 stands for an
// infinite NAE), run_ms, verify_ms (complete_ms when completed elsewhere).
//
// # Failure classes
//
// no_answer, embedded_ptx, compile_error, crash, timeout, resource_limit,
// wrong_output.
package ptx2cuda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/gpuprobe"
)

// LaneName is the lane's name in specs and records.
const LaneName = "ptx2cuda"

// cacheVersion changes when a compile job's meaning changes.
const cacheVersion = "ptx2cuda-v1"

// Stage names.
const (
	StageExtract = "extract"
	StageCheck   = "check"
	StageCompile = "compile"
	StageRun     = "run"
	StageCompare = "compare"
)

// stageOrder is the verdict's order.
var stageOrder = []string{StageExtract, StageCheck, StageCompile, StageRun, StageCompare}

// ClassEmbeddedPTX is an answer that carries PTX instead of decompiling
// it (inline asm, PTX text, module loading, the task's files included).
const ClassEmbeddedPTX tools.FailureClass = "embedded_ptx"

// Artifact names.
const (
	ArtifactAnswer    = "answer_source"
	ArtifactHarness   = "harness_source"
	ArtifactAnswerBin = "answer_binary"
	ArtifactRefBin    = "reference_binary"
	ArtifactGPUProbe  = "gpu_probe_binary"
	// ArtifactSpec is the task's harness.json, kept with a pending verdict
	// so that Complete needs nothing else.
	ArtifactSpec = "harness_spec"
)

// DefaultThreshold is PtxDec's NAE threshold.
const DefaultThreshold = 1e-3

// Config configures a Lane.
type Config struct {
	// Sandbox runs every compile and program. Required; its
	// ReadOnlyPaths must include Toolchains.SandboxPaths().
	Sandbox *sandboxes.Runner
	// Toolchains says where nvcc is, its version (part of every cache
	// key) and whether a GPU is present. Required.
	Toolchains *toolchain.Registry
	// Cache keeps compile outputs; nil makes one from CacheDir and
	// MemoryCacheBytes.
	Cache            *toolchain.Cache
	CacheDir         string
	MemoryCacheBytes int64
	// Parallel bounds concurrent compiles. Default the number of CPUs.
	Parallel int
	// GPUSlots bounds concurrent runs on the GPU. Default 1.
	GPUSlots int
	// SM is the target architecture. Default sm_90 (the PTX is made for
	// compute_90).
	SM string
	// Threshold is the NAE a floating output may reach. Default 1e-3.
	Threshold float64
	// Reps is the number of launches per timed batch (the harness times 5
	// batches and keeps the fastest). Default DefaultReps.
	Reps int
	// BuildLimits bound compiles; RunLimits bound the programs (no
	// address-space limit whatever is set: CUDA needs it off).
	BuildLimits sandboxes.Limits
	RunLimits   sandboxes.Limits
	// DiagnosticLines bounds a diagnostic. Default 12.
	DiagnosticLines int
	Logger          *slog.Logger
	// Torch opens, on first use, the torch2cuda judge that torch tasks
	// are judged with (prepare and verify); nil leaves their judged
	// stages pending.
	Torch func(ctx context.Context) (TorchJudge, error)
}

// DefaultBuildLimits bound nvcc.
func DefaultBuildLimits() sandboxes.Limits {
	return sandboxes.Limits{Wall: 180 * time.Second, CPU: 180 * time.Second, Memory: sandboxes.NoLimit,
		RSS: 4 << 30, Procs: 256, FileSize: 256 << 20, OpenFiles: 1024, Output: 1 << 20}
}

// DefaultRunLimits bound the harness programs: CPU above Wall so a spin
// reads as a timeout; RSS bounds host memory.
func DefaultRunLimits() sandboxes.Limits {
	return sandboxes.Limits{Wall: 60 * time.Second, CPU: 120 * time.Second, Memory: sandboxes.NoLimit,
		RSS: 16 << 30, Procs: 256, FileSize: 1 << 30, OpenFiles: 1024, Output: 1 << 20}
}

func (c Config) withDefaults() Config {
	if c.Parallel == 0 {
		c.Parallel = runtime.NumCPU()
	}
	if c.GPUSlots == 0 {
		c.GPUSlots = 1
	}
	if c.SM == "" {
		c.SM = toolchain.TargetSM90
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.Reps == 0 {
		c.Reps = DefaultReps
	}
	c.BuildLimits = c.BuildLimits.WithDefaults(DefaultBuildLimits())
	c.RunLimits = c.RunLimits.WithDefaults(DefaultRunLimits())
	c.RunLimits.Memory = sandboxes.NoLimit
	if c.DiagnosticLines == 0 {
		c.DiagnosticLines = 12
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	switch {
	case c.Sandbox == nil:
		return errors.New("ptx2cuda config: sandbox runner is required")
	case c.Toolchains == nil:
		return errors.New("ptx2cuda config: toolchain registry is required")
	case c.CacheDir != "" && !filepath.IsAbs(c.CacheDir):
		return fmt.Errorf("ptx2cuda config: cache dir %q is not absolute", c.CacheDir)
	case c.Parallel < 0 || c.GPUSlots < 0 || c.DiagnosticLines < 0 || c.MemoryCacheBytes < 0 || c.Reps < 0:
		return errors.New("ptx2cuda config: negative size")
	case c.Threshold < 0 || math.IsNaN(c.Threshold):
		return errors.New("ptx2cuda config: negative threshold")
	case c.SM != "" && (!strings.HasPrefix(c.SM, "sm_") || len(c.SM) < 5):
		return fmt.Errorf("ptx2cuda config: bad target %q", c.SM)
	}
	return nil
}

// Lane is the ptx2cuda verifier. It is safe for concurrent use.
type Lane struct {
	cfg    Config
	log    *slog.Logger
	cache  *toolchain.Cache
	builds *buildjob.Runner // every compile: sandbox, cache, Parallel bound
	gpu    *sandboxes.GPUSlots

	probe *gpuprobe.Probe // the GPU check before a run stage

	torchMu  sync.Mutex
	torchJ   TorchJudge // opened by torchJudge
	torchInc []string   // nvcc's flags for a torch extension (torchBuildFlags)
}

var (
	_ tools.Lane      = (*Lane)(nil)
	_ tools.Completer = (*Lane)(nil)
)

// New returns a lane.
func New(cfg Config) (*Lane, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cache := cfg.Cache
	if cache == nil {
		var err error
		cache, err = toolchain.NewCache(toolchain.CacheConfig{Dir: cfg.CacheDir, MemoryBytes: cfg.MemoryCacheBytes, Logger: cfg.Logger,
			Metrics: cfg.Sandbox.Metrics(), Name: LaneName})
		if err != nil {
			return nil, fmt.Errorf("ptx2cuda: %w", err)
		}
	}
	builds := newBuilds(cfg, cache)
	return &Lane{cfg: cfg, log: cfg.Logger, cache: cache,
		builds: builds, probe: newProbe(cfg, builds), gpu: sandboxes.NewGPUSlots(cfg.GPUSlots, LaneName, cfg.Sandbox.Metrics())}, nil
}

// Close stops reporting the lane's GPU run slots to the sandbox runner's
// metrics (the campaign using the lane has ended). Idempotent.
func (l *Lane) Close() error {
	l.gpu.Close()
	l.closeTorch()
	return nil
}

// Name is "ptx2cuda".
func (l *Lane) Name() string { return LaneName }

// Extract returns the CUDA kernel source in a model's final message.
func (l *Lane) Extract(text string) (string, bool) { return ExtractKernel(text) }

// Cache returns the lane's compile cache.
func (l *Lane) Cache() *toolchain.Cache { return l.cache }

// stageResult is one stage's outcome.
type stageResult struct {
	name        string
	ok, skipped bool
	class       tools.FailureClass
	detail      string
	dur         time.Duration
	diffs       []TensorDiff // compare's buffers
}

// verdictBuilder collects a verdict's stages, measurements and artifacts.
type verdictBuilder struct {
	start     time.Time
	stages    []stageResult
	meas      map[string]float64
	artifacts map[string][]byte
	suspicion []string
}

// checkStages starts a verdict with the extract and check stages of
// answer, a source defining __global__ kernel that check judges; failed
// reports that a stage failed (the verdict is then b.verdict("verify_ms")).
func checkStages(answer, kernel string, check func() (tools.FailureClass, string)) (b *verdictBuilder, failed bool) {
	b = newVerdict()
	if strings.TrimSpace(answer) == "" {
		b.add(stageResult{name: StageExtract, class: tools.ClassNoAnswer,
			detail: "no CUDA kernel found: answer with the kernel's source in one ```cuda fenced block"})
		return b, true
	}
	b.add(stageResult{name: StageExtract, ok: true, detail: fmt.Sprintf("%d lines", strings.Count(answer, "\n")+1)})
	b.artifacts[ArtifactAnswer] = []byte(answer)
	start := time.Now()
	if class, why := check(); class != tools.ClassNone {
		if class == ClassEmbeddedPTX {
			b.suspicion = append(b.suspicion, why)
		}
		b.add(stageResult{name: StageCheck, class: class, detail: why, dur: time.Since(start)})
		return b, true
	}
	b.add(stageResult{name: StageCheck, ok: true, detail: "defines __global__ " + kernel + "; no embedded PTX", dur: time.Since(start)})
	return b, false
}

func newVerdict() *verdictBuilder {
	return &verdictBuilder{start: time.Now(), meas: map[string]float64{}, artifacts: map[string][]byte{}}
}

func (b *verdictBuilder) add(r stageResult) { b.stages = append(b.stages, r) }

// verdict assembles the verdict: stages in order up to the first failure.
func (b *verdictBuilder) verdict(key string) tools.Verdict {
	v := tools.Verdict{Pass: true, Measurements: b.meas, Artifacts: b.artifacts, Suspicion: b.suspicion}
	var pending []string
	for _, r := range b.stages {
		v.Stages = append(v.Stages, tools.Stage{Name: r.name, OK: r.ok, Skipped: r.skipped, Detail: r.detail, Duration: r.dur})
		v.Stage = r.name
		if r.skipped {
			pending = append(pending, r.name)
			continue
		}
		if !r.ok {
			v.Pass, v.Class, v.Diagnostic = false, r.class, r.detail
			break
		}
	}
	if v.Pass && len(v.Stages) < len(stageOrder) {
		v.Pass, v.Class = false, tools.ClassInternal
		v.Diagnostic = fmt.Sprintf("only %d of %d stages ran", len(v.Stages), len(stageOrder))
	}
	if v.Pass && len(pending) > 0 {
		v.Diagnostic = "compiled; pending: " + strings.Join(pending, ", ") + " (no GPU on this host)"
		v.Measurements["pending_stages"] = float64(len(pending))
	}
	v.Measurements[key] = ms(time.Since(b.start))
	return v
}

// Verify judges answer (a CUDA kernel source) against item (a task: its
// files kernel.cu and harness.json).
func (l *Lane) Verify(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	if isProgramTask(item) {
		return l.verifyProgram(ctx, item, answer)
	}
	if isTorchTask(item) {
		return l.verifyTorch(ctx, item, answer)
	}
	h, ref, err := taskOf(item)
	if err != nil {
		return tools.Verdict{}, err
	}
	b, failed := checkStages(answer, h.Kernel, func() (tools.FailureClass, string) { return CheckAnswer(answer, h.Kernel) })
	if failed {
		return b.verdict("verify_ms"), nil
	}
	if err := l.cfg.Toolchains.Require(toolchain.NVCC); err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w", err)
	}

	var ans, refRes *buildjob.Result
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { ans, err = l.builds.Run(gctx, l.buildJob(h, answer)); return err })
	g.Go(func() (err error) { refRes, err = l.builds.Run(gctx, l.referenceJob(h, ref)); return err })
	if err := g.Wait(); err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w", err)
	}
	if !refRes.OK() {
		diag := refRes.FailureText(compilerDiagnostics.Of(string(refRes.Entry.Stderr), l.cfg.DiagnosticLines))
		if refRes.Exited() {
			return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w: the reference kernel does not build: %s", tools.ErrBadItem, diag)
		}
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: the reference build did not finish: %s", diag)
	}
	b.meas["reference_compile_ms"] = ms(refRes.Entry.Wall)
	b.meas["compile_ms"] = ms(ans.Entry.Wall)
	if !ans.OK() {
		diag := ans.FailureText(compilerDiagnostics.Of(string(ans.Entry.Stderr), l.cfg.DiagnosticLines))
		if strings.Contains(string(ans.Entry.Stderr), "cannot be used to initialize an entity of type \"void (*)") {
			diag += "\nthe kernel's parameter types must be exactly: " + h.Signature()
		}
		b.add(stageResult{name: StageCompile, class: ans.Class(tools.ClassCompileError), detail: diag, dur: ans.Wall})
		return b.verdict("verify_ms"), nil
	}
	ansBin, refBin := ans.Entry.Files[exeFile], refRes.Entry.Files[exeFile]
	if len(ansBin) == 0 || len(refBin) == 0 {
		return tools.Verdict{}, errors.New("ptx2cuda verify: nvcc left no executable")
	}
	b.add(stageResult{name: StageCompile, ok: true, dur: ans.Wall,
		detail: fmt.Sprintf("nvcc %s: executable %d KiB%s", strings.Join(append([]string{l.cfg.SM}, h.Flags...), " "), len(ansBin)>>10, ans.CachedNote())})
	b.artifacts[ArtifactHarness] = []byte(GenerateHarness(h, l.cfg.Reps))
	if err := l.runStages(ctx, b, h, ansBin, refBin, nil); err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w", err)
	}
	return b.verdict("verify_ms"), nil
}

// taskOf reads a task's harness spec and reference kernel.
func taskOf(item tools.Item) (HarnessSpec, string, error) {
	raw, ok := item.Files[FileHarness]
	if !ok {
		return HarnessSpec{}, "", fmt.Errorf("ptx2cuda: %w: the task has no %s", tools.ErrBadItem, FileHarness)
	}
	h, err := ParseHarness([]byte(raw))
	if err != nil {
		return HarnessSpec{}, "", fmt.Errorf("ptx2cuda: %w: %w", tools.ErrBadItem, err)
	}
	refFile := FileKernel
	if h.Reference == ReferencePTX {
		refFile = FilePTX // a Triton kernel: the reference is its PTX
	}
	ref := item.Files[refFile]
	if strings.TrimSpace(ref) == "" {
		return HarnessSpec{}, "", fmt.Errorf("ptx2cuda: %w: the task has no %s", tools.ErrBadItem, refFile)
	}
	return h, ref, nil
}
