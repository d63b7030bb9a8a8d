package cudasynth

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
)

// stageResult is one stage's outcome inside a pipeline.
type stageResult struct {
	ok, skipped bool
	class       tools.FailureClass
	detail      string // the stage's own text (the diagnostic when it failed)
	dur         time.Duration
}

// jobCtl lets a stage failure cancel the compiles of later stages.
type jobCtl struct {
	minStage int
	cancel   context.CancelFunc
}

// pipeline is one Verify call.
type pipeline struct {
	l     *Lane
	src   string
	start time.Time
	// hip is the given HIP translation (VerifyTranslation); nil: hipify
	// translates src. order is the verdict's stage order.
	hip   []byte
	order []string

	mu        sync.Mutex
	stages    map[string]stageResult
	artifacts map[string][]byte
	meas      map[string]float64
	firstFail int
	jobs      []jobCtl

	// Set by the chains, read after they end.
	ptxKernels []string
	cudaBin    []byte
	hipBin     []byte
	probeBin   []byte // a kept GPU probe (Complete); nil: build it
	rdna3Raw   string
}

func newPipeline(l *Lane, src string) *pipeline {
	p := &pipeline{l: l, src: src, start: time.Now(), order: stageOrder, stages: map[string]stageResult{},
		artifacts: map[string][]byte{ArtifactCUDASource: []byte(src)}, meas: map[string]float64{},
		firstFail: len(stageOrder)}
	if l.cfg.Classify != nil {
		if d := l.cfg.Classify(src); d != "" {
			p.artifacts[ArtifactDomain] = []byte(d)
		}
	}
	return p
}

// jobContext derives the context of a compile serving stage minStage (its
// earliest stage). It is canceled at once if an earlier stage already
// failed, and later when one does.
func (p *pipeline) jobContext(parent context.Context, minStage string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	idx := stageIndex(minStage)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstFail < idx {
		cancel()
	} else {
		p.jobs = append(p.jobs, jobCtl{minStage: idx, cancel: cancel})
	}
	return ctx, cancel
}

// record stores a stage's result; a failure cancels later stages' compiles.
func (p *pipeline) record(name string, r stageResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stages[name] = r
	if r.ok || r.skipped {
		return
	}
	idx := stageIndex(name)
	if idx < p.firstFail {
		p.firstFail = idx
		for _, j := range p.jobs {
			if j.minStage > idx {
				j.cancel()
			}
		}
	}
}

func (p *pipeline) artifact(name string, b []byte) {
	p.mu.Lock()
	p.artifacts[name] = b
	p.mu.Unlock()
}

func (p *pipeline) measure(name string, v float64) {
	p.mu.Lock()
	p.meas[name] += v
	p.mu.Unlock()
}

// failed reports whether any stage failed so far.
func (p *pipeline) failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstFail < len(p.order)
}

// canceledByUs tells a compile canceled because an earlier stage failed
// (not an error) from the caller's cancellation (an error).
func canceledByUs(parent, job context.Context) bool {
	return job.Err() != nil && parent.Err() == nil
}

// run runs both chains, then the RDNA3 check and the run stage.
func (p *pipeline) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return p.cudaChain(gctx) })
	g.Go(func() error { return p.hipChain(gctx) })
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if err := p.checkRDNA3(ctx); err != nil {
		return err
	}
	if p.failed() {
		return nil
	}
	return p.runPrograms(ctx)
}

// cudaChain: cuda-compile (with ptx and host-asm from the same compile),
// then sass.
func (p *pipeline) cudaChain(ctx context.Context) error {
	cfg := p.l.cfg
	j, ptxFile := p.l.cudaJob(p.src)
	jctx, cancel := p.jobContext(ctx, StageCUDACompile)
	defer cancel()
	res, err := p.l.builds.Run(jctx, j)
	if err != nil {
		if canceledByUs(ctx, jctx) {
			return nil
		}
		return err
	}
	p.measure("cuda_compile_ms", ms(res.Entry.Wall))
	p.countCompile(res)
	if !res.OK() {
		diag := res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), cfg.DiagnosticLines))
		p.record(StageCUDACompile, stageResult{class: res.Class(tools.ClassCompileError), detail: diag, dur: res.Wall})
		return nil
	}
	p.cudaBin = res.Entry.Files[cudaExe]
	if cfg.KeepBinaries {
		p.artifact(ArtifactCUDABinary, p.cudaBin)
	}
	p.record(StageCUDACompile, stageResult{ok: true, dur: res.Wall,
		detail: fmt.Sprintf("nvcc %s: executable %d KiB%s", strings.Join(cfg.SMs, "+"), len(p.cudaBin)>>10, res.CachedNote())})

	if !p.recordPTX(res, ptxFile) {
		return nil
	}
	p.recordHostAsmCUDA(res)
	return p.sassStage(ctx, res)
}

// recordPTX records the ptx stage from the cuda compile's kept PTX file
// and notes its kernels; it reports whether the stage passed.
func (p *pipeline) recordPTX(res *buildjob.Result, ptxFile string) bool {
	ptx, ok := res.Entry.Files[ptxFile]
	switch {
	case !ok:
		p.record(StagePTX, stageResult{class: tools.ClassCompileError, detail: "nvcc kept no " + ptxFile})
		return false
	default:
		p.ptxKernels = KernelsPTX(string(ptx))
		p.artifact(ArtifactPTX, p.asm(DialectPTX, string(ptx)))
		if len(p.ptxKernels) == 0 {
			p.record(StagePTX, stageResult{class: tools.ClassCompileError,
				detail: "the program defines no kernel: the PTX has no .entry (write at least one __global__ function and launch it)"})
			return false
		}
		p.record(StagePTX, stageResult{ok: true, detail: fmt.Sprintf("%d kernel(s): %s", len(p.ptxKernels), strings.Join(p.ptxKernels, ", "))})
		return true
	}
}

// recordHostAsmCUDA records the host-asm stage from the host assembly the
// cuda compile kept (fatbin data stripped).
func (p *pipeline) recordHostAsmCUDA(res *buildjob.Result) {
	hostAsm, ok := res.Entry.Files["program.s"]
	if !ok {
		p.record(StageHostAsm, stageResult{class: tools.ClassCompileError, detail: "gcc -save-temps left no program.s"})
	} else {
		stripped, dropped := StripFatbin(string(hostAsm))
		p.artifact(ArtifactHostAsmCUDA, p.asm(DialectX86, stripped))
		if !hasMain(stripped) {
			p.record(StageHostAsm, stageResult{class: tools.ClassCompileError, detail: "the host assembly defines no main"})
		} else {
			p.record(StageHostAsm, stageResult{ok: true,
				detail: fmt.Sprintf("%d lines, %d fatbin data lines removed", strings.Count(stripped, "\n"), dropped)})
		}
	}
}

// sassStage disassembles the cuda compile's fatbin and records the sass
// stage: SASS for every target SM, each with every PTX kernel.
func (p *pipeline) sassStage(ctx context.Context, res *buildjob.Result) error {
	cfg := p.l.cfg
	fatbin, ok := res.Entry.Files["program.fatbin"]
	if !ok {
		p.record(StageSASS, stageResult{class: tools.ClassCompileError, detail: "nvcc kept no program.fatbin"})
		return nil
	}
	sj := buildjob.Command("sass", toolchain.CUObjdump, []string{"-sass", "program.fatbin"}, map[string][]byte{"program.fatbin": fatbin})
	sctx, scancel := p.jobContext(ctx, StageSASS)
	defer scancel()
	sres, err := p.l.builds.Run(sctx, sj)
	if err != nil {
		if canceledByUs(ctx, sctx) {
			return nil
		}
		return err
	}
	p.measure("sass_ms", ms(sres.Entry.Wall))
	p.countCompile(sres)
	if !sres.OK() {
		p.record(StageSASS, stageResult{class: sres.Class(tools.ClassCompileError), dur: sres.Wall,
			detail: sres.FailureText(buildjob.FirstLines(string(sres.Entry.Stderr)+string(sres.Entry.Stdout), cfg.DiagnosticLines))})
		return nil
	}
	byArch := SplitSASS(string(sres.Entry.Stdout))
	var problems, parts []string
	for _, sm := range cfg.SMs {
		text, ok := byArch[sm]
		if !ok {
			problems = append(problems, "no SASS for "+sm)
			continue
		}
		p.artifact(ArtifactSASS(sm), p.asm(DialectSASS, text))
		funcs := KernelsSASS(text)
		if missing := missingFrom(p.ptxKernels, funcs); len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("SASS for %s lacks %s", sm, strings.Join(missing, ", ")))
		}
		parts = append(parts, fmt.Sprintf("%s: %d function(s)", sm, len(funcs)))
	}
	if len(problems) > 0 {
		p.record(StageSASS, stageResult{class: tools.ClassCompileError, detail: strings.Join(problems, "; "), dur: sres.Wall})
		return nil
	}
	p.record(StageSASS, stageResult{ok: true, dur: sres.Wall, detail: strings.Join(parts, ", ") + sres.CachedNote()})
	return nil
}

// hipChain: hipify (or the given HIP source), then hip-compile-amd
// (device and host) and hip-compile-nvidia in parallel.
func (p *pipeline) hipChain(ctx context.Context) error {
	hip, ok := p.hip, true
	if hip == nil {
		hip, ok = p.translateHIP()
	} else {
		p.givenHIP()
	}
	if !ok {
		return nil
	}
	dev, host, nv := p.hipJobs(hip)
	amdRes, err := p.compileHIP(ctx, dev, host, nv)
	if err != nil {
		return err
	}
	p.recordHIPCompileAMD(amdRes[0], amdRes[1])
	return nil
}

// translateHIP runs hipify on the source and records the hipify stage; it
// returns the HIP source and whether the translation is complete.
func (p *pipeline) translateHIP() ([]byte, bool) {
	cfg := p.l.cfg
	start := time.Now()
	tr, err := cfg.Translate(p.src)
	dur := time.Since(start)
	p.measure("hipify_ms", ms(dur))
	if err != nil {
		p.record(StageHipify, stageResult{class: ClassTranslateUnsupported, dur: dur,
			detail: "hipify could not read the program: " + err.Error()})
		return nil, false
	}
	p.measure("hipify_replacements", float64(tr.Replacements))
	p.artifact(ArtifactHIPSource, []byte(tr.HIP))
	if !tr.OK() {
		var lines []string
		for i, is := range tr.Unsupported {
			if i == cfg.DiagnosticLines {
				lines = append(lines, fmt.Sprintf("... %d more", len(tr.Unsupported)-i))
				break
			}
			lines = append(lines, fmt.Sprintf("line %d:%d: %s: %s", is.Line, is.Col, is.Construct, is.Reason))
		}
		p.record(StageHipify, stageResult{class: ClassTranslateUnsupported, dur: dur,
			detail: "CUDA constructs without a HIP translation:\n" + strings.Join(lines, "\n")})
		return nil, false
	}
	p.record(StageHipify, stageResult{ok: true, dur: dur, detail: fmt.Sprintf("%d replacements", tr.Replacements)})
	return []byte(tr.HIP), true
}

// givenHIP records the hip-source stage of a given HIP translation.
func (p *pipeline) givenHIP() {
	p.artifact(ArtifactHIPSource, p.hip)
	p.record(StageHIPSource, stageResult{ok: true,
		detail: fmt.Sprintf("HIP source given: %d lines", strings.Count(string(p.hip), "\n"))})
}

// hipJobs are the compiles of the HIP source: the AMD device and host
// assembly (hipcc -S) and the NVIDIA executable (nvcc).
func (p *pipeline) hipJobs(hip []byte) (dev, host, nv buildjob.Job) {
	cfg := p.l.cfg
	reg := cfg.Toolchains
	amdArgs := append(append([]string{}, cfg.HIPCCFlags...), reg.HIPArgs(cfg.AMDArch)...)
	dev = buildjob.Command("hip-amd-device", toolchain.HIPCC,
		append(append([]string{}, amdArgs...), "--cuda-device-only", "-S", "-o", "program.rdna3.s", hipFile),
		map[string][]byte{hipFile: hip}, "program.rdna3.s")
	host = buildjob.Command("hip-amd-host", toolchain.HIPCC,
		append(append([]string{}, amdArgs...), "--cuda-host-only", "-S", "-o", "program.host.s", hipFile),
		map[string][]byte{hipFile: hip}, "program.host.s")
	nvArgs := append([]string{"-x", "cu", "-D__HIP_PLATFORM_NVIDIA__"}, cfg.NVCCFlags...)
	if legacyVote.Match(hip) {
		// HIP 5.2's NVIDIA headers map __ballot/__any/__all to CUDA's
		// pre-Volta vote intrinsics, which PTX for compute_70+ rejects:
		// build that PTX for compute_60 and let ptxas make the same SASS.
		for _, sm := range cfg.SMs {
			nvArgs = append(nvArgs, "-gencode", "arch=compute_60,code="+sm)
		}
	} else {
		nvArgs = append(nvArgs, gencodes(cfg.SMs)...)
	}
	nvArgs = append(nvArgs, "-o", hipExe, hipFile)
	nv = buildjob.Command("hip-nvidia", toolchain.NVCC, nvArgs, map[string][]byte{hipFile: hip}, hipExe)
	return dev, host, nv
}

// compileHIP runs the AMD device and host compiles and the NVIDIA compile
// in parallel, recording hip-compile-nvidia and any hip-compile-amd
// failure. It returns the AMD compiles' results (device, host), nil where
// a compile was canceled by an earlier failure.
func (p *pipeline) compileHIP(ctx context.Context, dev, host, nv buildjob.Job) ([2]*buildjob.Result, error) {
	var amdRes [2]*buildjob.Result
	g, gctx := errgroup.WithContext(ctx)
	for i, j := range []buildjob.Job{dev, host} {
		g.Go(func() error {
			jctx, cancel := p.jobContext(gctx, StageHIPCompileAMD)
			defer cancel()
			res, err := p.l.builds.Run(jctx, j)
			if err != nil {
				if canceledByUs(gctx, jctx) {
					return nil
				}
				return err
			}
			amdRes[i] = res
			p.measure("hip_compile_amd_ms", ms(res.Entry.Wall))
			p.countCompile(res)
			if !res.OK() { // fail fast: cancels hip-compile-nvidia
				p.record(StageHIPCompileAMD, p.hipFailure(res))
			}
			return nil
		})
	}
	g.Go(func() error { return p.compileHIPNvidia(gctx, nv) })
	err := g.Wait()
	return amdRes, err
}

// compileHIPNvidia runs the NVIDIA compile of the HIP source and records
// hip-compile-nvidia, keeping the executable.
func (p *pipeline) compileHIPNvidia(ctx context.Context, nv buildjob.Job) error {
	cfg := p.l.cfg
	jctx, cancel := p.jobContext(ctx, StageHIPCompileNvidia)
	defer cancel()
	res, err := p.l.builds.Run(jctx, nv)
	if err != nil {
		if canceledByUs(ctx, jctx) {
			return nil
		}
		return err
	}
	p.measure("hip_compile_nvidia_ms", ms(res.Entry.Wall))
	p.countCompile(res)
	if !res.OK() {
		p.record(StageHIPCompileNvidia, p.hipFailure(res))
		return nil
	}
	p.hipBin = res.Entry.Files[hipExe]
	if cfg.KeepBinaries {
		p.artifact(ArtifactHIPBinary, p.hipBin)
	}
	p.record(StageHIPCompileNvidia, stageResult{ok: true, dur: res.Wall,
		detail: fmt.Sprintf("nvcc -D__HIP_PLATFORM_NVIDIA__ %s: executable %d KiB%s", strings.Join(cfg.SMs, "+"), len(p.hipBin)>>10, res.CachedNote())})
	return nil
}

// recordHIPCompileAMD records hip-compile-amd from the device and host
// compiles' assembly once both succeeded, and keeps the RDNA3 text for
// checkRDNA3.
func (p *pipeline) recordHIPCompileAMD(devRes, hostRes *buildjob.Result) {
	cfg := p.l.cfg
	if devRes == nil || hostRes == nil || !devRes.OK() || !hostRes.OK() {
		return // failure recorded, or canceled by an earlier failure
	}
	rdna, okD := devRes.Entry.Files["program.rdna3.s"]
	hostAsm, okH := hostRes.Entry.Files["program.host.s"]
	if !okD || !okH {
		p.record(StageHIPCompileAMD, stageResult{class: ClassHIPCompileError, detail: "hipcc -S wrote no assembly"})
		return
	}
	p.rdna3Raw = string(rdna)
	p.artifact(ArtifactRDNA3, p.asm(DialectAMDGPU, string(rdna)))
	p.artifact(ArtifactHostAsmHIP, p.asm(DialectX86, string(hostAsm)))
	note := ""
	if devRes.Hit && hostRes.Hit {
		note = " (cached)"
	}
	p.record(StageHIPCompileAMD, stageResult{ok: true, dur: max(devRes.Wall, hostRes.Wall),
		detail: fmt.Sprintf("hipcc %s: device %d lines, host %d lines%s", cfg.AMDArch, strings.Count(string(rdna), "\n"),
			strings.Count(string(hostAsm), "\n"), note)})
}

// hipFailure describes a failed HIP compile.
func (p *pipeline) hipFailure(res *buildjob.Result) stageResult {
	return stageResult{class: res.Class(ClassHIPCompileError), dur: res.Wall,
		detail: res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), p.l.cfg.DiagnosticLines))}
}

// checkRDNA3 checks the RDNA3 text's target and kernels, and assembles
// the program's own inline assembly (hipcc -S prints it unchecked, so PTX
// inline assembly would otherwise pass). The whole text is not assembled:
// llvm-mc 15 rejects some instructions its own compiler prints for gfx1100
// (register overlap in v_mad_u64_u32).
func (p *pipeline) checkRDNA3(ctx context.Context) error {
	p.mu.Lock()
	amd, reached := p.stages[StageHIPCompileAMD]
	p.mu.Unlock()
	if !reached || !amd.ok {
		return nil
	}
	start := time.Now()
	arch := p.l.cfg.AMDArch
	target := AMDGPUTarget(p.rdna3Raw)
	kernels := KernelsRDNA(p.rdna3Raw)
	var problems []string
	if !strings.HasSuffix(target, "--"+arch) && !strings.HasSuffix(target, "-"+arch) {
		problems = append(problems, fmt.Sprintf("the device assembly targets %q, not %s", target, arch))
	}
	if len(kernels) == 0 {
		problems = append(problems, "the device assembly has no kernel (.amdhsa_kernel)")
	}
	// Compare names, not manglings: CUDA's and HIP's vector types differ
	// (float3 vs HIP_vector_type<float, 3>), so the same kernel mangles
	// differently on the two sides.
	if missing := missingFrom(kernelBases(p.ptxKernels), kernelBases(kernels)); len(missing) > 0 {
		problems = append(problems, "kernels missing from the RDNA3 assembly: "+strings.Join(missing, ", "))
	}
	inline := InlineAsmAMDGPU(p.rdna3Raw)
	if len(problems) == 0 && inline != "" {
		j := buildjob.Command("rdna3-inline-asm", toolchain.LLVMMC,
			[]string{"-triple=amdgcn-amd-amdhsa", "-mcpu=" + arch, "-filetype=obj", "-o", "inline.o", "inline.s"},
			map[string][]byte{"inline.s": []byte(inline)})
		res, err := p.l.builds.Run(ctx, j)
		if err != nil {
			return err
		}
		p.countCompile(res)
		if !res.OK() {
			problems = append(problems, "the program's inline assembly is not valid "+arch+" assembly:\n"+
				res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), p.l.cfg.DiagnosticLines)))
		}
	}
	if len(problems) > 0 {
		p.record(StageRDNA3, stageResult{class: ClassHIPCompileError, dur: time.Since(start), detail: strings.Join(problems, "; ")})
		return nil
	}
	detail := fmt.Sprintf("%s, %d kernel(s): %s", target, len(kernels), strings.Join(kernels, ", "))
	if inline != "" {
		detail += "; inline assembly assembles"
	}
	p.record(StageRDNA3, stageResult{ok: true, dur: time.Since(start), detail: detail})
	return nil
}

// runPrograms runs both executables on the GPU and compares their output.
func (p *pipeline) runPrograms(ctx context.Context) error {
	cfg := p.l.cfg
	gpu := cfg.Toolchains.GPU()
	if !gpu.Present {
		p.record(StageRun, stageResult{skipped: true,
			detail: "skipped: no NVIDIA GPU on this host (no /dev/nvidia*, no nvidia-smi); `kiln rescore --pending` on a GPU host runs the kept binaries"})
		// Keep what a GPU host needs to finish the stage without compilers.
		p.artifact(ArtifactCUDABinary, p.cudaBin)
		p.artifact(ArtifactHIPBinary, p.hipBin)
		if probe, err := p.l.probe.Binary(ctx); err == nil {
			p.artifact(ArtifactGPUProbe, probe)
		} else {
			p.l.log.Warn("gpu probe not kept with the pending record", "err", err)
		}
		return nil
	}
	if len(p.cudaBin) == 0 || len(p.hipBin) == 0 {
		return fmt.Errorf("run: executables missing")
	}
	if err := p.l.gpu.Acquire(ctx); err != nil {
		return context.Cause(ctx)
	}
	defer p.l.gpu.Release()
	if err := p.l.probe.Check(ctx, p.probeBin); err != nil {
		return err
	}
	box, err := cfg.Sandbox.Open(ctx)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	defer box.Close()
	for name, b := range map[string][]byte{cudaExe: p.cudaBin, hipExe: p.hipBin} {
		if err := box.WriteFile(name, b, 0o755); err != nil {
			return fmt.Errorf("run: %w", err)
		}
	}
	start := time.Now()
	var res [2]sandboxes.Result
	for i, exe := range []string{cudaExe, hipExe} {
		// Peak GPU memory is attributable only while a run has the GPU
		// to itself (one GPU slot).
		var mem *devMemSampler
		if cfg.GPUSlots == 1 {
			mem = startDevMem(ctx, gpu.SMI)
		}
		r, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"./" + exe}, Limits: cfg.RunLimits, KillOnOutputCap: true, GPU: true})
		peak, seen := mem.stop()
		if err != nil {
			return fmt.Errorf("run %s: %w", exe, err)
		}
		if seen {
			p.measure([]string{"device_mem_peak_mib_cuda", "device_mem_peak_mib_hip"}[i], float64(peak))
		}
		res[i] = r
	}
	dur := time.Since(start)
	p.measure("run_cuda_ms", ms(res[0].Wall))
	p.measure("run_hip_ms", ms(res[1].Wall))
	p.artifact(ArtifactOutputCUDA, res[0].Stdout)
	p.artifact(ArtifactOutputHIP, res[1].Stdout)
	for i, which := range []string{"the CUDA program", "the HIP program (on NVIDIA)"} {
		if class, bad := runClass(res[i]); bad {
			diag := which + " " + res[i].Describe()
			if i == 1 && res[i].Outcome() == sandboxes.OutcomeExited {
				if diff := differsWherePrinted(res[0].Stdout, res[i].Stdout, cfg.Tolerance, cfg.DiagnosticLines); diff != "" {
					class = tools.ClassWrongOutput
					diag += ", after printing results that differ from the CUDA program's:\n" + diff
				}
			}
			if s := buildjob.FirstLines(string(res[i].Stderr), 5); s != "" {
				diag += "\nstderr: " + s
			}
			p.record(StageRun, stageResult{class: class, detail: diag, dur: dur})
			return nil
		}
	}
	diff := CompareOutputs(res[0].Stdout, res[1].Stdout, cfg.Tolerance, cfg.DiagnosticLines)
	if diff != "" {
		p.record(StageRun, stageResult{class: tools.ClassWrongOutput, dur: dur,
			detail: "the CUDA and HIP builds print different results:\n" + diff})
		return nil
	}
	detail := fmt.Sprintf("outputs agree (%d bytes, %s)", len(res[0].Stdout), strings.Join(gpu.Names, ", "))
	if len(strings.TrimSpace(string(res[0].Stdout))) == 0 {
		detail = "both programs ran; they print nothing, so there was nothing to compare"
	}
	p.record(StageRun, stageResult{ok: true, dur: dur, detail: detail})
	return nil
}

// differsWherePrinted compares the lines the HIP program printed before
// its non-zero exit with the CUDA program's first lines ("" when they
// agree). A program whose own check found a wrong result prints it and
// exits 1, as models' and the corpus's programs do: that is a wrong
// output. One that stopped at an error check before printing anything
// different is a crash.
func differsWherePrinted(want, got []byte, tol Tolerance, maxLines int) string {
	g := strings.TrimRight(string(got), "\n")
	if g == "" {
		return ""
	}
	w := strings.Split(strings.TrimRight(string(want), "\n"), "\n")
	w = w[:min(len(w), strings.Count(g, "\n")+1)]
	return CompareOutputs([]byte(strings.Join(w, "\n")), []byte(g), tol, maxLines)
}

// runClass maps a program run to a failure class; a non-zero exit (a CUDA
// error check's exit(1)) counts as a crash (but see differsWherePrinted).
func runClass(r sandboxes.Result) (tools.FailureClass, bool) {
	switch r.Outcome() {
	case sandboxes.OutcomeTimeout:
		return tools.ClassTimeout, true
	case sandboxes.OutcomeResourceLimit:
		return tools.ClassResourceLimit, true
	case sandboxes.OutcomeCrashed:
		return tools.ClassCrash, true
	}
	if r.ExitCode != 0 {
		return tools.ClassCrash, true
	}
	return tools.ClassNone, false
}

// verdict assembles stages in order up to the first failure.
func (p *pipeline) verdict() tools.Verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := tools.Verdict{Measurements: p.meas, Artifacts: p.artifacts, Pass: true}
	var pending []string
	for _, name := range p.order {
		r, ok := p.stages[name]
		if !ok {
			continue
		}
		v.Stages = append(v.Stages, tools.Stage{Name: name, OK: r.ok, Skipped: r.skipped, Detail: r.detail, Duration: r.dur})
		v.Stage = name
		if r.skipped {
			pending = append(pending, name)
			continue
		}
		if !r.ok {
			v.Pass, v.Class, v.Diagnostic = false, r.class, r.detail
			break
		}
	}
	if v.Pass && len(v.Stages) < len(p.order) {
		// Cannot happen unless a stage was lost: never pass silently.
		v.Pass, v.Class = false, tools.ClassInternal
		v.Diagnostic = fmt.Sprintf("only %d of %d stages ran", len(v.Stages), len(p.order))
	}
	if v.Pass && len(pending) > 0 {
		v.Diagnostic = "CPU stages passed; pending: " + strings.Join(pending, ", ") + " (" + p.stages[pending[0]].detail + ")"
		v.Measurements["pending_stages"] = float64(len(pending))
	}
	v.Measurements["verify_ms"] = ms(time.Since(p.start))
	return v
}

// asm returns assembly for an artifact: normalised unless RawArtifacts.
func (p *pipeline) asm(d Dialect, text string) []byte {
	if p.l.cfg.RawArtifacts {
		return []byte(text)
	}
	return []byte(NormalizeAsm(d, text))
}

func (p *pipeline) countCompile(r *buildjob.Result) {
	p.measure("compiles", 1)
	if r.Hit {
		p.measure("compiles_cached", 1)
	}
}

// legacyVote finds the HIP warp votes that HIP 5.2's NVIDIA headers turn
// into CUDA's pre-Volta intrinsics.
var legacyVote = regexp.MustCompile(`\b__(ballot|any|all)\s*\(`)

// gencodes are nvcc's -gencode flags for SASS targets.
func gencodes(sms []string) []string {
	var out []string
	for _, sm := range sms {
		out = append(out, "-gencode", fmt.Sprintf("arch=%s,code=%s", strings.Replace(sm, "sm_", "compute_", 1), sm))
	}
	return out
}

// KernelBase is a kernel's name without its mangled parameter types:
// "_Z9clothStepPK6float4S1_PS_" -> "clothStep", "_ZN2ns1kEv" -> "ns::k";
// an unmangled (extern "C") name is returned as is.
func KernelBase(mangled string) string {
	s, ok := strings.CutPrefix(mangled, "_Z")
	if !ok {
		return mangled
	}
	readName := func(s string) (string, string, bool) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n, err := strconv.Atoi(s[:i])
		if i == 0 || err != nil || n > len(s)-i {
			return "", s, false
		}
		return s[i : i+n], s[i+n:], true
	}
	if rest, nested := strings.CutPrefix(s, "N"); nested {
		var parts []string
		for {
			name, r, ok := readName(rest)
			if !ok {
				break
			}
			parts, rest = append(parts, name), r
		}
		if len(parts) == 0 {
			return mangled
		}
		return strings.Join(parts, "::")
	}
	name, _, ok := readName(s)
	if !ok {
		return mangled
	}
	return name
}

func kernelBases(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = KernelBase(n)
	}
	return out
}

// missingFrom lists the names of want absent from have.
func missingFrom(want, have []string) []string {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	var out []string
	for _, w := range want {
		if !set[w] {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
