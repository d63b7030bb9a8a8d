// Package sass2rdna is the sass2rdna lane (CASS's assembly translation):
// a model reads the NVIDIA SASS (sm_90) of a CUDA program's kernels, with
// the CUDA source for context, and writes AMD RDNA3 assembly for gfx1100
// defining every kernel. The lane judges the assembly on a CPU host as far
// as a CPU host can, builds everything an AMD host needs to run it, and
// leaves the run itself pending.
//
// # Items and answers
//
// An item (tools.Item, Lane "sass2rdna") has:
//
//   - Files["program.cu"]: the CUDA program (context for the model; its
//     HIP translation when there is no program.hip).
//   - Files["program.hip"]: the HIP program whose hipcc build is the
//     reference RDNA3 and whose host code runs the answer on an AMD host
//     (a corpus's reference.hip, else hipify.Translate of program.cu).
//   - Meta["kernels"]: the kernels the answer must define, as HIP mangles
//     them (space-separated; the reference's kernels when absent). HIP
//     mangles vector types differently from CUDA (float3 is
//     HIP_vector_type<float, 3>), so these are the names the host program
//     registers, not always the SASS's.
//
// The answer is the assembly of one ```asm (or ```s) block ([Extract]).
//
// # Stages
//
// In this order (the names are fixed; refinement keys on them):
//
//	extract     the answer is not blank (else no_answer)
//	check       static checks: .amdgcn_target "amdgcn-amd-amdhsa--gfx1100";
//	              an .amdhsa_kernel block and a code label for every kernel,
//	              whose code has an s_endpgm and does not run off its end
//	              (its last instruction, s_code_end and s_nop padding aside,
//	              is s_endpgm, s_branch or s_setpc_b64) (descriptor_error);
//	              no machine code as data: no data
//	              directive (.byte/.long/.quad ...) in code sections, none
//	              holding the s_endpgm word (0xbfb00000) in data sections;
//	              no .incbin/.include, no directive spelled through macro
//	              parameters (embedded_code)
//	assemble    llvm-mc-15 -triple=amdgcn-amd-amdhsa -mcpu=gfx1100
//	              -filetype=obj (sandbox; assemble_error)
//	link        ld.lld-15 --no-undefined -shared: the code object a HIP
//	              runtime loads (sandbox; link_error)
//	symbols     the code object read with debug/elf: gfx1100 e_flags, each
//	              kernel's code symbol (global function, 256-byte aligned)
//	              and descriptor symbol <kernel>.kd (global, 64 bytes) whose
//	              entry offset points at the code, LDS and VGPR counts
//	              within gfx1100's limits, an AMDGPU metadata note naming
//	              every kernel, and a kernarg segment that holds the kernel's
//	              arguments: the descriptor's kernarg size equals the
//	              metadata's .kernarg_segment_size, every argument the
//	              metadata lays out fits in it, and so do the arguments
//	              hipcc's kernel takes from the host program
//	              (descriptor_error). It runs after link, where the
//	              descriptor's entry offset is resolved.
//	similarity  the cosine similarity of the answer's opcode histogram and
//	              the reference RDNA3's (hipcc -Os --offload-arch=gfx1100
//	              --cuda-device-only -S of program.hip, cached): recorded as
//	              the measurement opcode_similarity, never a pass criterion
//	amd-run     needs an AMD gfx1100 GPU (/dev/kfd). Without one (every
//	              CPU host) the stage is Skipped, so the verdict is pending,
//	              never a pass: Verify first builds, in the sandbox, the
//	              program that stage runs (amd_program: the host code of
//	              program.hip with the answer's code object bundled in as
//	              its device code, hipcc --cuda-host-only
//	              -fcuda-include-gpubinary) and the reference
//	              (amd_reference_program: hipcc's own build of program.hip),
//	              and keeps both as artifacts. [Lane.Complete] runs them on
//	              an AMD host (`kiln rescore --pending RUN`) and compares
//	              their outputs ([cudasynth.CompareOutputs]).
//
// # llvm-mc and compiler output
//
// llvm-mc 15 rejects v_mad_u64_u32 and v_mad_i64_i32 whose destination
// overlaps a source ("destination must be different than all sources"):
// GFX11.0 has a hardware bug in these instructions' forwarding, so LLVM
// marks the destination early-clobber, yet LLVM 15's code generator (hipcc
// 5.2) still emits the overlap (LLVM issue #59358; later LLVM code
// generators apply the workaround on GFX11.0 and drop it for GFX11.5 and
// GFX12, whose hardware lacks the bug). Of the 47 translatable programs of
// the cuda-synth corpus, hipcc's gfx1100 assembly of 34 has it (63
// instructions in all) and does not assemble; the other 13 assemble as
// printed (CASS-Bench set: 8 of 20 have it, 14 instructions). The lane keeps llvm-mc's judgement (the code object is what an
// AMD host would run, and there is no other assembler): such answers fail
// with assemble_error, labelled asm.mad64_overlap, and the diagnostic says
// how to fix them. The lane's script answers are hipcc's output passed
// through [LegaliseMad64], which moves each overlapping destination to a
// fresh VGPR pair.
//
// # Failure classes
//
// no_answer, descriptor_error, embedded_code, assemble_error, link_error;
// timeout and resource_limit when a tool hits a sandbox limit; on an AMD
// host crash, timeout and wrong_output from the run. A verifier fault
// (toolchain missing) is an error; an item whose HIP program hipcc cannot
// build is an error wrapping tools.ErrBadItem.
//
// # Record
//
// Artifacts: code_object (the linked ELF), rdna3_reference (hipcc's
// assembly, normalised), and while amd-run is pending amd_program and
// amd_reference_program; after a run, output_answer and output_reference.
// Measurements: opcode_similarity, instructions, reference_instructions,
// kernels, mad64_overlaps, the stages' times and verify_ms.
package sass2rdna

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// LaneName is the lane's name in items and specs.
const LaneName = "sass2rdna"

// cacheVersion changes when a job's meaning changes.
const cacheVersion = "sass2rdna-v1"

// Stage names.
const (
	StageExtract    = "extract"
	StageCheck      = "check"
	StageAssemble   = "assemble"
	StageLink       = "link"
	StageSymbols    = "symbols"
	StageSimilarity = "similarity"
	StageAMDRun     = "amd-run"
)

// stageOrder is the verdict's order.
var stageOrder = []string{StageExtract, StageCheck, StageAssemble, StageLink, StageSymbols, StageSimilarity, StageAMDRun}

// Failure classes of this lane beyond the shared ones.
const (
	// ClassDescriptor: the target, a kernel's label, end (s_endpgm),
	// descriptor, symbols, kernarg segment or metadata are missing or
	// wrong.
	ClassDescriptor tools.FailureClass = "descriptor_error"
	// ClassEmbeddedCode: machine code smuggled in as data, or files read
	// at assembly time.
	ClassEmbeddedCode tools.FailureClass = "embedded_code"
)

// Artifact names.
const (
	ArtifactCodeObject      = "code_object"
	ArtifactReference       = "rdna3_reference"
	ArtifactAMDProgram      = "amd_program"
	ArtifactAMDReference    = "amd_reference_program"
	ArtifactOutputAnswer    = "output_answer"
	ArtifactOutputReference = "output_reference"
)

// Item file names and meta keys.
const (
	FileCUDA       = "program.cu"
	FileHIP        = "program.hip"
	FileExpected   = "expected_stdout.txt"
	MetaKernels    = "kernels"
	answerFile     = "answer.s"
	answerObj      = "answer.o"
	codeObjectFile = "answer.co"
	amdProgram     = "amd_program"
	amdReference   = "amd_reference_program"
)

// Config configures a Lane.
type Config struct {
	// Sandbox runs every tool and program. Required; its ReadOnlyPaths
	// must include Toolchains.SandboxPaths() (the derived device libs).
	Sandbox *sandboxes.Runner
	// Toolchains says where llvm-mc and hipcc are (ld.lld and
	// clang-offload-bundler are taken from llvm-mc's folder) and their
	// versions (part of every cache key). Required.
	Toolchains *toolchain.Registry
	// Cache keeps job outputs; nil makes one from CacheDir and
	// MemoryCacheBytes.
	Cache            *toolchain.Cache
	CacheDir         string
	MemoryCacheBytes int64
	// Translate turns CUDA into HIP for items without program.hip.
	// Default hipify.Translate.
	Translate func(src string) (hipify.Result, error)
	// Parallel bounds concurrent jobs across Verify calls. Default the
	// number of CPUs.
	Parallel int
	// HIPCCFlags go to hipcc's builds. Default -Os (CASS's flag).
	HIPCCFlags []string
	// BuildLimits bound tools; RunLimits bound programs on an AMD host.
	// Zero fields take the defaults below.
	BuildLimits sandboxes.Limits
	RunLimits   sandboxes.Limits
	// Tolerance compares the answer's and the reference's outputs on an
	// AMD host. Zero: cudasynth.DefaultTolerance.
	Tolerance cudasynth.Tolerance
	// KFD is the AMD GPU kernel driver's device node. Default /dev/kfd.
	KFD string
	// KFDTopology holds the AMD GPU nodes' properties. Default
	// /sys/class/kfd/kfd/topology/nodes.
	KFDTopology string
	// DiagnosticLines bounds a diagnostic. Default 12.
	DiagnosticLines int
	// Logger receives debug records; nil discards.
	Logger *slog.Logger
}

// DefaultBuildLimits bound llvm-mc, ld.lld and hipcc. No address-space
// limit (clang reserves freely); the cgroup RSS limit bounds memory.
func DefaultBuildLimits() sandboxes.Limits {
	return sandboxes.Limits{Wall: 120 * time.Second, CPU: 120 * time.Second, Memory: sandboxes.NoLimit,
		RSS: 4 << 30, Procs: 256, FileSize: 256 << 20, OpenFiles: 1024, Output: 1 << 20}
}

// DefaultRunLimits bound the programs run on an AMD host.
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
	if c.HIPCCFlags == nil {
		c.HIPCCFlags = []string{"-Os"}
	}
	c.BuildLimits = c.BuildLimits.WithDefaults(DefaultBuildLimits())
	c.RunLimits = c.RunLimits.WithDefaults(DefaultRunLimits())
	if c.Tolerance == (cudasynth.Tolerance{}) {
		c.Tolerance = cudasynth.DefaultTolerance()
	}
	if c.KFD == "" {
		c.KFD = "/dev/kfd"
	}
	if c.KFDTopology == "" {
		c.KFDTopology = "/sys/class/kfd/kfd/topology/nodes"
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
		return errors.New("sass2rdna config: sandbox runner is required")
	}
	if c.Toolchains == nil {
		return errors.New("sass2rdna config: toolchain registry is required")
	}
	for what, p := range map[string]string{"cache dir": c.CacheDir, "kfd": c.KFD, "kfd topology": c.KFDTopology} {
		if p != "" && !filepath.IsAbs(p) {
			return fmt.Errorf("sass2rdna config: %s %q is not absolute", what, p)
		}
	}
	if c.Parallel < 0 || c.DiagnosticLines < 0 || c.MemoryCacheBytes < 0 {
		return errors.New("sass2rdna config: negative size")
	}
	return nil
}

// Lane is the sass2rdna lane. It is safe for concurrent use.
type Lane struct {
	cfg   Config
	log   *slog.Logger
	cache *toolchain.Cache
	jobs  *buildjob.Runner // every tool run: sandbox, cache, Parallel bound
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
			return nil, fmt.Errorf("sass2rdna: %w", err)
		}
	}
	return &Lane{cfg: cfg, log: cfg.Logger, cache: cache, jobs: newJobs(cfg, cache)}, nil
}

// Name is "sass2rdna".
func (l *Lane) Name() string { return LaneName }

// Extract returns the assembly of a model's final message.
func (l *Lane) Extract(text string) (string, bool) { return Extract(text) }

// verdict builds a Verdict stage by stage.
type verdict struct {
	v     tools.Verdict
	start time.Time
}

func newVerdict() *verdict {
	return &verdict{v: tools.Verdict{Pass: true, Measurements: map[string]float64{}, Artifacts: map[string][]byte{}}, start: time.Now()}
}

// ok records a passed stage.
func (b *verdict) ok(name, detail string, dur time.Duration) {
	b.v.Stages = append(b.v.Stages, tools.Stage{Name: name, OK: true, Detail: detail, Duration: dur})
	b.v.Stage = name
}

// skip records a stage left for another host: the verdict is pending.
func (b *verdict) skip(name, detail string) {
	b.v.Stages = append(b.v.Stages, tools.Stage{Name: name, Skipped: true, Detail: detail})
	b.v.Stage = name
}

// fail records a failed stage and ends the verdict.
func (b *verdict) fail(name string, class tools.FailureClass, detail string, dur time.Duration) tools.Verdict {
	b.v.Stages = append(b.v.Stages, tools.Stage{Name: name, Detail: detail, Duration: dur})
	b.v.Stage, b.v.Pass, b.v.Class, b.v.Diagnostic = name, false, class, detail
	return b.done()
}

func (b *verdict) done() tools.Verdict {
	if pending := tools.PendingStages(b.v); b.v.Pass && len(pending) > 0 {
		for _, s := range b.v.Stages {
			if s.Skipped {
				b.v.Diagnostic = "CPU stages passed; pending: " + strings.Join(pending, ", ") + " (" + s.Detail + ")"
				break
			}
		}
		b.v.Measurements["pending_stages"] = float64(len(pending))
	}
	b.v.Measurements["verify_ms"] = ms(time.Since(b.start))
	return b.v
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Verify judges answer, RDNA3 assembly, against item.
func (l *Lane) Verify(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	b := newVerdict()
	if strings.TrimSpace(answer) == "" {
		return b.fail(StageExtract, tools.ClassNoAnswer,
			"no RDNA3 assembly found: put the complete gfx1100 assembly in one ```asm fenced block", 0), nil
	}
	for _, tool := range []string{toolchain.LLVMMC, toolchain.HIPCC} {
		if _, ok := l.cfg.Toolchains.Get(tool); !ok {
			return tools.Verdict{}, fmt.Errorf("sass2rdna verify: %w", l.cfg.Toolchains.Require(tool))
		}
	}
	b.ok(StageExtract, fmt.Sprintf("%d lines", strings.Count(strings.TrimRight(answer, "\n"), "\n")+1), 0)
	ref, err := l.Reference(ctx, item)
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("sass2rdna verify: %w", err)
	}
	b.v.Artifacts[ArtifactReference] = []byte(normalise(ref.RDNA3))
	kernels := strings.Fields(item.Meta[MetaKernels])
	if len(kernels) == 0 {
		kernels = ref.Kernels
	}
	b.v.Measurements["kernels"] = float64(len(kernels))

	// check
	start := time.Now()
	info := scanAsm(answer)
	b.v.Measurements["instructions"] = float64(info.instructions())
	b.v.Measurements["mad64_overlaps"] = float64(len(info.madOverlaps))
	if why := info.embedded(); why != "" {
		return b.fail(StageCheck, ClassEmbeddedCode, "the answer does not write the kernels as instructions: "+why+
			". Write every kernel as RDNA3 instructions (tables belong in data sections)", time.Since(start)), nil
	}
	if problems := checkStatic(info, kernels); len(problems) > 0 {
		return b.fail(StageCheck, ClassDescriptor, strings.Join(problems, "\n"), time.Since(start)), nil
	}
	b.ok(StageCheck, fmt.Sprintf("%s, %d kernel(s): %s", info.target, len(kernels), strings.Join(kernels, ", ")), time.Since(start))

	// assemble
	res, err := l.jobs.Run(ctx, l.assembleJob(answer))
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("sass2rdna verify: %w", err)
	}
	b.v.Measurements["assemble_ms"] = ms(res.Entry.Wall)
	if !res.OK() {
		diag := diagnostic(res, l.cfg.DiagnosticLines)
		if len(info.madOverlaps) > 0 && strings.Contains(string(res.Entry.Stderr), "destination must be different than all sources") {
			diag += "\n" + mad64Hint
		}
		return b.fail(StageAssemble, res.Class(tools.ClassAssembleError), diag, res.Wall), nil
	}
	obj := res.Entry.Files[answerObj]
	b.ok(StageAssemble, fmt.Sprintf("llvm-mc gfx1100: object %d bytes%s", len(obj), res.CachedNote()), res.Wall)

	// link
	lj, err := l.linkJob(obj)
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("sass2rdna verify: %w", err)
	}
	res, err = l.jobs.Run(ctx, lj)
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("sass2rdna verify: %w", err)
	}
	b.v.Measurements["link_ms"] = ms(res.Entry.Wall)
	if !res.OK() {
		return b.fail(StageLink, res.Class(tools.ClassLinkError), diagnostic(res, l.cfg.DiagnosticLines), res.Wall), nil
	}
	co := res.Entry.Files[codeObjectFile]
	b.v.Artifacts[ArtifactCodeObject] = co
	b.ok(StageLink, fmt.Sprintf("ld.lld: code object %d bytes%s", len(co), res.CachedNote()), res.Wall)

	// symbols
	start = time.Now()
	found, problems := checkCodeObject(co, kernels)
	if len(problems) == 0 {
		problems = kernargProblems(found, metadataKernels(answer), ref.meta)
	}
	if len(problems) > 0 {
		return b.fail(StageSymbols, ClassDescriptor, strings.Join(problems, "\n"), time.Since(start)), nil
	}
	b.ok(StageSymbols, describeKernels(found, ref), time.Since(start))

	// similarity
	start = time.Now()
	sim := OpcodeSimilarity(answer, ref.RDNA3)
	b.v.Measurements["opcode_similarity"] = sim
	b.v.Measurements["reference_instructions"] = float64(scanAsm(ref.RDNA3).instructions())
	b.ok(StageSimilarity, fmt.Sprintf("opcode histogram cosine %.3f against hipcc's gfx1100 assembly (%d vs %d instructions; recorded, not judged)",
		sim, info.instructions(), int(b.v.Measurements["reference_instructions"])), time.Since(start))

	// amd-run
	if err := l.amdRunStage(ctx, b, item, ref, co); err != nil {
		return tools.Verdict{}, fmt.Errorf("sass2rdna verify: %w", err)
	}
	return b.done(), nil
}

// mad64Hint explains llvm-mc's v_mad_u64_u32 rejection.
const mad64Hint = "note: on gfx1100 the destination of v_mad_u64_u32/v_mad_i64_i32 must not overlap any source " +
	"(a GFX11.0 hardware bug; llvm-mc enforces it, although hipcc 5.2 itself prints such code): write the result to a free " +
	"VGPR pair (raise .amdhsa_next_free_vgpr) and copy it with v_mov_b32 where it is needed"

// checkStatic checks the target and that every kernel has a descriptor
// block and a code label; one line per problem.
func checkStatic(info asmInfo, kernels []string) []string {
	var problems []string
	switch info.target {
	case Target:
	case "":
		problems = append(problems, `no .amdgcn_target directive: start with .amdgcn_target "`+Target+`"`)
	default:
		problems = append(problems, fmt.Sprintf(".amdgcn_target %q, not %q", info.target, Target))
	}
	for _, k := range kernels {
		if _, ok := info.funcs[k]; !ok {
			problems = append(problems, fmt.Sprintf("kernel %s has no code label (%s:) in a code section", k, k))
		}
	}
	for _, k := range kernels {
		switch f := info.funcs[k]; {
		case f == nil:
		case !f.endpgm:
			problems = append(problems, fmt.Sprintf("kernel %s has no s_endpgm: its waves never end (end every path of a kernel with s_endpgm)", k))
		case !terminators[f.last]:
			problems = append(problems, fmt.Sprintf("kernel %s's code ends with %s: control runs off its end into whatever follows (end it with s_endpgm or s_branch)", k, f.last))
		}
	}
	for _, k := range kernels {
		if _, ok := info.descriptors[k]; !ok {
			problems = append(problems, fmt.Sprintf("kernel %s has no kernel descriptor (.amdhsa_kernel %s ... .end_amdhsa_kernel)", k, k))
		}
	}
	if len(kernels) == 0 {
		problems = append(problems, "the task names no kernel to define")
	}
	return problems
}

// describeKernels is the symbols stage's detail: each kernel's resources,
// and where they differ from the reference's.
func describeKernels(found []codeObjectKernel, ref *Reference) string {
	var parts []string
	for _, k := range found {
		s := fmt.Sprintf("%s: %d bytes of code, LDS %d, scratch %d, kernarg %d, %d VGPRs", cudasynth.KernelBase(k.name),
			k.size, k.desc.GroupSegment, k.desc.PrivateSegment, k.desc.KernargSize, k.desc.vgprs())
		if rk, ok := ref.descriptors[k.name]; ok && rk.KernargSize != k.desc.KernargSize {
			s += fmt.Sprintf(" (the reference's kernarg is %d)", rk.KernargSize)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// assembleJob assembles an answer into answer.o.
func (l *Lane) assembleJob(asm string) buildjob.Job {
	return buildjob.Job{Name: "assemble", Steps: []buildjob.Step{{Tool: toolchain.LLVMMC,
		Args: []string{"-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-filetype=obj", "-o", answerObj, answerFile}}},
		Inputs: map[string][]byte{answerFile: []byte(asm)}, Outputs: []string{answerObj}}
}

// linkJob links an object into a code object, as hipcc's device link does.
func (l *Lane) linkJob(obj []byte) (buildjob.Job, error) {
	lld, err := llvmTool(l.cfg.Toolchains, "ld.lld")
	if err != nil {
		return buildjob.Job{}, err
	}
	return buildjob.Job{Name: "link", Steps: []buildjob.Step{{Tool: toolchain.LLVMMC, Path: lld,
		Args: []string{"--no-undefined", "-shared", "-o", codeObjectFile, answerObj}}},
		Inputs: map[string][]byte{answerObj: obj}, Outputs: []string{codeObjectFile}}, nil
}
