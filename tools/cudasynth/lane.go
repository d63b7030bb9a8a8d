// Package cudasynth is the cuda-synth lane: a model writes a complete CUDA
// program (kernels and a main that runs them and prints results), and the
// lane turns it into one aligned CASS-style record: CUDA and HIP sources,
// PTX, SASS for sm_86 and sm_90, RDNA3 (gfx1100) assembly and the host
// assembly of both stacks, checking at every step that it builds, and, on
// a host with an NVIDIA GPU, that the CUDA build and the HIP build (run on
// NVIDIA) print the same results.
//
// # Items and answers
//
// Verify(ctx, item, answer) judges answer, the .cu source (as
// [ExtractProgram] pulls it out of a ```cuda/```cpp/```c++ block). When
// answer is blank the item's Files["program.cu"] is judged instead, so
// `kiln verify cuda-synth --source P.cu` is Verify(ctx, ItemFromFile(P), "").
//
// # Stages
//
// In this order (the names are fixed; refinement keys on them):
//
//	cuda-compile        nvcc --keep -Xcompiler -save-temps=cwd -Xcompiler -Os
//	                      -gencode arch=compute_86,code=sm_86 -gencode arch=compute_90,code=sm_90
//	                      -o program program.cu                         (sandbox)
//	ptx                 program.compute_86.ptx kept by that compile (what nvcc -ptx
//	                      -arch=compute_86 prints); it must define a kernel (.entry)
//	sass                cuobjdump -sass program.fatbin, split per architecture
//	                      (device code only: the program's module, not nvcc's
//	                      empty link stubs); every PTX kernel must appear
//	host-asm            program.s, gcc's host assembly saved by -save-temps, with
//	                      the embedded fatbin's data lines removed (host and
//	                      device separated); it must define main
//	hipify              hipify.Translate (in process); constructs it cannot
//	                      translate fail the stage: translate_unsupported.
//	                      [Lane.VerifyTranslation] judges a given HIP source
//	                      instead: stage hip-source records it in this slot
//	hip-compile-amd     HIP_PLATFORM=amd hipcc -Os --offload-arch=gfx1100
//	                      --rocm-device-lib-path=<derived> --cuda-device-only -S
//	                      (RDNA3) and the same with --cuda-host-only -S (host)
//	rdna3               the RDNA3 text names .amdgcn_target ...--gfx1100 and has an
//	                      .amdhsa_kernel for every PTX kernel; inline assembly
//	                      (;;#ASMSTART blocks, which -S prints unchecked) must
//	                      assemble with llvm-mc -mcpu=gfx1100. The whole text is
//	                      not assembled: llvm-mc 15 rejects some of its own
//	                      compiler's gfx1100 output (v_mad_u64_u32 overlap).
//	hip-compile-nvidia  nvcc -x cu -D__HIP_PLATFORM_NVIDIA__ (same flags) -o program_hip
//	run                 GPU hosts only: ./program and ./program_hip in the sandbox,
//	                      no address-space limit; outputs compared ([CompareOutputs],
//	                      [DefaultTolerance]). Without a GPU the stage is recorded
//	                      Skipped (OK false) with the reason, the verdict passes on
//	                      the CPU stages, and its Diagnostic and [Pending] name the
//	                      pending stage. Before the first run a probe program
//	                      (built like answers) must pass in the sandbox, else
//	                      Verify fails with ErrGPUUnusable instead of blaming
//	                      the answer.
//
// nvcc 11.8 has no -Os: the host side gets it through -Xcompiler, device
// code keeps ptxas's default optimisation. Every compile runs in a sandbox
// box (the source is untrusted); compiles of one answer run in parallel,
// all compiles of the lane are bounded by Config.Parallel, and each is
// cached by a hash of its inputs, its command and the tool versions
// ([toolchain.Cache], in memory and in Config.CacheDir), so an answer seen
// before builds nothing. Keys hold tool versions (not paths), so a GPU
// host can replay a cache filled elsewhere; they do not hold the version
// of nvcc's host gcc or of the ROCm device libraries, so clear the cache
// when those packages change. A stage failure cancels the compiles of
// later stages; the verdict records stages up to the first failure, so it
// is the same whatever finished first.
//
// # Failure classes
//
// no_answer (blank source), compile_error (nvcc, or a CUDA-side check such
// as "no kernel"), translate_unsupported, hip_compile_error (hipcc, the
// RDNA3 check, or nvcc on the HIP source), crash (a run killed by a signal
// or exiting non-zero), timeout, resource_limit, wrong_output (the CUDA and
// HIP runs disagree). Compiler timeouts and limits map to timeout and
// resource_limit too.
//
// # Record
//
// Artifacts: cuda_source, hip_source, ptx, sass_sm86, sass_sm90,
// host_asm_cuda, rdna3, host_asm_hip (assembly normalised with
// [NormalizeAsm], as CASS did), output_cuda and output_hip (runs only),
// domain (when Config.Classify is set), and with Config.KeepBinaries the
// executables cuda_binary and hip_nvidia_binary. A verdict whose run is
// pending keeps both executables and gpu_probe_binary whatever
// KeepBinaries says: [Lane.Complete] runs them later on a GPU host
// (`kiln rescore --pending`), no compiler needed there. Measurements: compile
// times per stage in ms (the original compile's time when cached),
// compiles and compiles_cached, hipify_replacements, run times (run_cuda_ms,
// run_hip_ms) and, with one GPU slot, each program's peak GPU memory
// (device_mem_peak_mib_cuda, device_mem_peak_mib_hip: nvidia-smi queried
// back to back during the run, so a lower bound; absent when the program
// ended before a query saw it).
package cudasynth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/gpuprobe"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// LaneName is the lane's name in items and specs.
const LaneName = "cuda-synth"

// cacheVersion changes when a compile job's meaning changes.
const cacheVersion = "cuda-synth-v1"

// Stage names.
const (
	StageCUDACompile      = "cuda-compile"
	StagePTX              = "ptx"
	StageSASS             = "sass"
	StageHostAsm          = "host-asm"
	StageHipify           = "hipify"
	StageHIPCompileAMD    = "hip-compile-amd"
	StageRDNA3            = "rdna3"
	StageHIPCompileNvidia = "hip-compile-nvidia"
	StageRun              = "run"
	// StageExtract is recorded only for a blank answer (no_answer).
	StageExtract = "extract"
)

// StageHIPSource takes StageHipify's place in a verdict of
// VerifyTranslation: the HIP source was given, not translated.
const StageHIPSource = "hip-source"

// stageOrder is the verdict's order; translationOrder is that of
// VerifyTranslation, with hip-source in hipify's slot.
var (
	stageOrder = []string{StageCUDACompile, StagePTX, StageSASS, StageHostAsm, StageHipify,
		StageHIPCompileAMD, StageRDNA3, StageHIPCompileNvidia, StageRun}
	translationOrder = []string{StageCUDACompile, StagePTX, StageSASS, StageHostAsm, StageHIPSource,
		StageHIPCompileAMD, StageRDNA3, StageHIPCompileNvidia, StageRun}
)

// stageIndex is a stage's slot in either order.
func stageIndex(name string) int {
	if name == StageHIPSource {
		name = StageHipify
	}
	for i, s := range stageOrder {
		if s == name {
			return i
		}
	}
	return -1
}

// Failure classes of this lane beyond the shared ones.
const (
	ClassTranslateUnsupported tools.FailureClass = "translate_unsupported"
	ClassHIPCompileError      tools.FailureClass = "hip_compile_error"
)

// Artifact names.
const (
	ArtifactCUDASource  = "cuda_source"
	ArtifactHIPSource   = "hip_source"
	ArtifactPTX         = "ptx"
	ArtifactHostAsmCUDA = "host_asm_cuda"
	ArtifactRDNA3       = "rdna3"
	ArtifactHostAsmHIP  = "host_asm_hip"
	ArtifactOutputCUDA  = "output_cuda"
	ArtifactOutputHIP   = "output_hip"
	ArtifactDomain      = tools.ArtifactDomain
	ArtifactCUDABinary  = "cuda_binary"
	ArtifactHIPBinary   = "hip_nvidia_binary"
	// ArtifactGPUProbe is the GPU probe executable, kept (once in the
	// content-addressed store) with every verdict whose run is pending, so
	// that a GPU host without the toolchains can check its GPU in the
	// sandbox before it completes them.
	ArtifactGPUProbe = "gpu_probe_binary"
)

// ArtifactSASS names the SASS artifact of an architecture ("sm_86" ->
// "sass_sm86").
func ArtifactSASS(sm string) string { return "sass_" + strings.ReplaceAll(sm, "_", "") }

// Source file names in an item and in boxes.
const (
	SourceFile = "program.cu"
	hipFile    = "program.hip"
	cudaExe    = "program"
	hipExe     = "program_hip"
)

// Config configures a Lane.
type Config struct {
	// Sandbox runs every compile and program. Required. Its
	// ReadOnlyPaths must include Toolchains.SandboxPaths() (Debian's
	// /etc/nvcc.profile, the derived device libraries).
	Sandbox *sandboxes.Runner
	// Toolchains says where nvcc, cuobjdump and hipcc are, their versions
	// (part of every cache key) and whether a GPU is present. Required.
	Toolchains *toolchain.Registry
	// Cache keeps compile outputs; nil makes one from CacheDir and
	// MemoryCacheBytes. Share one cache between lanes.
	Cache            *toolchain.Cache
	CacheDir         string
	MemoryCacheBytes int64
	// Translate turns CUDA into HIP. Default hipify.Translate.
	Translate func(src string) (hipify.Result, error)
	// Classify labels a program's domain (prompts/persona.Classify); nil
	// records none.
	Classify func(src string) string
	// Parallel bounds concurrent compiles across all Verify calls. Default
	// the number of CPUs.
	Parallel int
	// GPUSlots bounds concurrent program runs on the GPU. Default 1.
	GPUSlots int
	// SMs are the SASS targets. Default sm_86, sm_90. The PTX artifact is
	// the first one's.
	SMs []string
	// AMDArch is the RDNA target. Default gfx1100.
	AMDArch string
	// NVCCFlags go to both nvcc compiles. Default -Xcompiler -Os.
	NVCCFlags []string
	// HIPCCFlags go to both hipcc compiles. Default -Os.
	HIPCCFlags []string
	// BuildLimits bound compiles; RunLimits bound program runs (the
	// address-space limit stays off for runs whatever is set: CUDA
	// reserves large address ranges). Zero fields take the defaults below.
	BuildLimits sandboxes.Limits
	RunLimits   sandboxes.Limits
	// Tolerance compares the two runs' outputs. Zero: DefaultTolerance.
	Tolerance Tolerance
	// KeepBinaries adds the two executables to the artifacts.
	KeepBinaries bool
	// RawArtifacts stores assembly as the compilers printed it instead of
	// normalised (NormalizeAsm: CASS's form, the default). The host
	// assembly of the CUDA build loses its fatbin data either way.
	RawArtifacts bool
	// DiagnosticLines bounds a diagnostic. Default 12.
	DiagnosticLines int
	// Logger receives debug records; nil discards.
	Logger *slog.Logger
}

// DefaultBuildLimits bound nvcc, cuobjdump and hipcc runs. RLIMIT_AS is off
// (nvcc's front end and hipcc's clang reserve address space freely); the
// cgroup RSS limit, wall, CPU, file size and processes bound them.
func DefaultBuildLimits() sandboxes.Limits {
	return sandboxes.Limits{Wall: 180 * time.Second, CPU: 180 * time.Second, Memory: sandboxes.NoLimit,
		RSS: 4 << 30, Procs: 256, FileSize: 512 << 20, OpenFiles: 1024, Output: 1 << 20}
}

// DefaultRunLimits bound the built programs. CPU is above Wall so a spin
// reads as a timeout; no address-space limit (CUDA needs it off), RSS
// bounds host memory instead.
func DefaultRunLimits() sandboxes.Limits {
	return sandboxes.Limits{Wall: 60 * time.Second, CPU: 120 * time.Second, Memory: sandboxes.NoLimit,
		RSS: 16 << 30, Procs: 256, FileSize: 64 << 20, OpenFiles: 1024, Output: 1 << 20}
}

func (c Config) withDefaults() Config {
	if c.Translate == nil {
		c.Translate = hipify.Translate
	}
	if c.Parallel == 0 {
		c.Parallel = runtime.NumCPU()
	}
	if c.GPUSlots == 0 {
		c.GPUSlots = 1
	}
	if len(c.SMs) == 0 {
		c.SMs = []string{toolchain.TargetSM86, toolchain.TargetSM90}
	}
	if c.AMDArch == "" {
		c.AMDArch = toolchain.TargetGFX1100
	}
	if c.NVCCFlags == nil {
		c.NVCCFlags = []string{"-Xcompiler", "-Os"}
	}
	if c.HIPCCFlags == nil {
		c.HIPCCFlags = []string{"-Os"}
	}
	c.BuildLimits = c.BuildLimits.WithDefaults(DefaultBuildLimits())
	c.RunLimits = c.RunLimits.WithDefaults(DefaultRunLimits())
	c.RunLimits.Memory = sandboxes.NoLimit
	if c.Tolerance == (Tolerance{}) {
		c.Tolerance = DefaultTolerance()
	}
	if c.Tolerance.IgnoreNumbers == nil {
		c.Tolerance.IgnoreNumbers = DefaultIgnoreNumbers
	}
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
	if c.Sandbox == nil {
		return errors.New("cuda-synth config: sandbox runner is required")
	}
	if c.Toolchains == nil {
		return errors.New("cuda-synth config: toolchain registry is required")
	}
	if c.CacheDir != "" && !filepath.IsAbs(c.CacheDir) {
		return fmt.Errorf("cuda-synth config: cache dir %q is not absolute", c.CacheDir)
	}
	if c.Parallel < 0 || c.GPUSlots < 0 || c.DiagnosticLines < 0 || c.MemoryCacheBytes < 0 {
		return errors.New("cuda-synth config: negative size")
	}
	if c.Tolerance.Rel < 0 || c.Tolerance.Abs < 0 {
		return errors.New("cuda-synth config: negative tolerance")
	}
	for _, sm := range c.SMs {
		if !strings.HasPrefix(sm, "sm_") || len(sm) < 5 {
			return fmt.Errorf("cuda-synth config: bad SASS target %q", sm)
		}
	}
	return nil
}

// Lane is the cuda-synth lane. It is safe for concurrent use.
type Lane struct {
	cfg    Config
	log    *slog.Logger
	cache  *toolchain.Cache
	builds *buildjob.Runner // every compile: sandbox, cache, Parallel bound
	gpu    *sandboxes.GPUSlots

	probe *gpuprobe.Probe // the GPU check before a run stage
}

var _ tools.Lane = (*Lane)(nil)

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
			return nil, fmt.Errorf("cuda-synth: %w", err)
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
	return nil
}

// Name is "cuda-synth".
func (l *Lane) Name() string { return LaneName }

// Extract returns the CUDA program in a model's final message.
func (l *Lane) Extract(text string) (string, bool) { return ExtractProgram(text) }

// Cache returns the lane's compile cache (for statistics).
func (l *Lane) Cache() *toolchain.Cache { return l.cache }

// ItemFromFile builds an item from a .cu file: Files["program.cu"] holds
// it, Meta["source"] its path.
func ItemFromFile(path string) (tools.Item, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return tools.Item{}, fmt.Errorf("cuda-synth item: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return tools.Item{}, fmt.Errorf("cuda-synth item: %s is empty", path)
	}
	return tools.Item{Lane: LaneName, Files: map[string]string{SourceFile: string(b)}, Meta: map[string]string{"source": path}}, nil
}

// Pending lists the stages a verdict skipped (run, without a GPU): the
// work still owed before the record is fully verified.
func Pending(v tools.Verdict) []string { return tools.PendingStages(v) }

// Verify judges answer (a CUDA program; blank: the item's program.cu).
func (l *Lane) Verify(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	src := answer
	if strings.TrimSpace(src) == "" {
		src = item.Files[SourceFile]
	}
	if strings.TrimSpace(src) == "" {
		return noProgram("no CUDA program in the answer",
			"no CUDA program found: put the complete program (kernels and main) in one ```cuda fenced block"), nil
	}
	return l.verify(ctx, newPipeline(l, src))
}

// VerifyTranslation judges hip, a given HIP translation of the CUDA
// program cuda, with Verify's stages and hip-source (StageHIPSource) in
// hipify's place: cuda is built and checked as Verify would (a failure
// there is cuda's, not hip's: the caller says what it means), hip is built
// for RDNA3 and for NVIDIA, its RDNA3 assembly must hold every kernel of
// cuda's PTX (by name), and on a GPU host both programs run and their
// outputs are compared. A pending run is completed by Complete, as for
// Verify. The artifacts are Verify's, hip_source being hip itself. A blank
// hip is no_answer (stage extract); a blank cuda is an error wrapping
// tools.ErrBadItem.
func (l *Lane) VerifyTranslation(ctx context.Context, cuda, hip string) (tools.Verdict, error) {
	if strings.TrimSpace(cuda) == "" {
		return tools.Verdict{}, fmt.Errorf("cuda-synth verify translation: %w: no CUDA program", tools.ErrBadItem)
	}
	if strings.TrimSpace(hip) == "" {
		return noProgram("no HIP program given", "no HIP program found: give the complete HIP program (kernels and main)"), nil
	}
	p := newPipeline(l, cuda)
	p.hip, p.order = []byte(hip), translationOrder
	return l.verify(ctx, p)
}

// noProgram is the no_answer verdict of a blank source.
func noProgram(detail, diagnostic string) tools.Verdict {
	return tools.Verdict{Class: tools.ClassNoAnswer, Stage: StageExtract,
		Stages: []tools.Stage{{Name: StageExtract, Detail: detail}}, Diagnostic: diagnostic}
}

// verify runs p once the toolchains are known to be there.
func (l *Lane) verify(ctx context.Context, p *pipeline) (tools.Verdict, error) {
	for _, tool := range []string{toolchain.NVCC, toolchain.CUObjdump, toolchain.HIPCC} {
		if _, ok := l.cfg.Toolchains.Get(tool); !ok {
			return tools.Verdict{}, fmt.Errorf("cuda-synth verify: %w", l.cfg.Toolchains.Require(tool))
		}
	}
	if err := p.run(ctx); err != nil {
		return tools.Verdict{}, fmt.Errorf("cuda-synth verify: %w", err)
	}
	return p.verdict(), nil
}
