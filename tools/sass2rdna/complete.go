package sass2rdna

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// ErrNoAMDGPU means the amd-run stage cannot run on this host: there is no
// AMD gfx1100 GPU (no /dev/kfd, or a GPU of another generation).
var ErrNoAMDGPU = errors.New("sass2rdna: no AMD gfx1100 GPU on this host")

// ErrSandboxNoKFD means the host has the GPU but programs in the sandbox
// cannot reach it: the sandbox view of GPU runs (sandboxes/view.go) binds
// /dev/kfd when the host has it; this error means that bind failed.
var ErrSandboxNoKFD = errors.New("sass2rdna: the sandbox does not expose /dev/kfd to GPU runs")

// gfx1100Version is KFD's gfx_target_version of gfx1100.
const gfx1100Version = "110000"

// amdGPU reports whether this host has an AMD gfx1100 GPU (ROCm's KFD
// device node and a topology node of gfx_target_version 110000); the
// error wraps ErrNoAMDGPU and says what was found.
func (l *Lane) amdGPU() error {
	st, err := os.Stat(l.cfg.KFD)
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return fmt.Errorf("%w (no %s: the ROCm kernel driver is not loaded)", ErrNoAMDGPU, l.cfg.KFD)
	}
	nodes, _ := filepath.Glob(filepath.Join(l.cfg.KFDTopology, "*", "properties"))
	var seen []string
	for _, p := range nodes {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == "gfx_target_version" && f[1] != "0" {
				if f[1] == gfx1100Version {
					return nil
				}
				seen = append(seen, f[1])
			}
		}
	}
	if len(seen) == 0 {
		return fmt.Errorf("%w (%s exists but no GPU node in %s)", ErrNoAMDGPU, l.cfg.KFD, l.cfg.KFDTopology)
	}
	return fmt.Errorf("%w (found gfx_target_version %s; the code objects are for gfx1100, 110000)", ErrNoAMDGPU, strings.Join(seen, ", "))
}

// amdJobs are the builds the amd-run stage needs: the program that runs
// the answer (program.hip's host code with the answer's code object
// bundled in as its device code: clang-offload-bundler, then hipcc
// --cuda-host-only -Xclang -fcuda-include-gpubinary, then hipcc's link)
// and the reference (hipcc's own build of program.hip).
func (l *Lane) amdJobs(hip string, codeObject []byte) (prog, ref buildjob.Job, err error) {
	bundler, err := llvmTool(l.cfg.Toolchains, "clang-offload-bundler")
	if err != nil {
		return buildjob.Job{}, buildjob.Job{}, err
	}
	hipArgs := l.hipArgs()
	prog = buildjob.Job{Name: "amd-program", Inputs: map[string][]byte{FileHIP: []byte(hip), codeObjectFile: codeObject},
		Outputs: []string{amdProgram}, Steps: []buildjob.Step{
			{Tool: toolchain.LLVMMC, Path: bundler, Args: []string{"-type=o", "-bundle-align=4096",
				"-targets=host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--gfx1100",
				"-input=/dev/null", "-input=" + codeObjectFile, "-output=answer.hipfb"}},
			{Tool: toolchain.HIPCC, Args: append(slices.Clone(hipArgs), "--cuda-host-only", "-c", "-o", "host.o", FileHIP,
				"-Xclang", "-fcuda-include-gpubinary", "-Xclang", "answer.hipfb")},
			{Tool: toolchain.HIPCC, Args: append(l.cfg.Toolchains.HIPArgs(toolchain.TargetGFX1100), "-o", amdProgram, "host.o")},
		}}
	ref = buildjob.Job{Name: "amd-reference", Inputs: map[string][]byte{FileHIP: []byte(hip)}, Outputs: []string{amdReference},
		Steps: []buildjob.Step{{Tool: toolchain.HIPCC, Args: append(slices.Clone(hipArgs), "-o", amdReference, FileHIP)}}}
	return prog, ref, nil
}

// amdRunStage builds the amd-run stage's programs and runs them where
// there is an AMD gfx1100 GPU; elsewhere it records the stage pending and
// keeps the programs for a host that has one.
func (l *Lane) amdRunStage(ctx context.Context, b *verdict, item tools.Item, ref *Reference, codeObject []byte) error {
	pj, rj, err := l.amdJobs(ref.HIP, codeObject)
	if err != nil {
		return err
	}
	var bins [2][]byte
	for i, j := range []buildjob.Job{pj, rj} {
		res, err := l.jobs.Run(ctx, j)
		if err != nil {
			return err
		}
		b.v.Measurements["amd_build_ms"] += ms(res.Entry.Wall)
		if !res.OK() {
			return fmt.Errorf("%w: %s: the HIP program does not build with this code object (step %s): %s",
				tools.ErrBadItem, j.Name, res.Entry.Meta[buildjob.MetaStep], diagnostic(res, l.cfg.DiagnosticLines))
		}
		bins[i] = res.Entry.Files[j.Outputs[0]]
	}
	if gpuErr := l.amdGPU(); gpuErr != nil {
		b.v.Artifacts[ArtifactAMDProgram], b.v.Artifacts[ArtifactAMDReference] = bins[0], bins[1]
		b.skip(StageAMDRun, fmt.Sprintf("skipped: %v. Kept %s (program.hip's host code with this answer's code object, %d KiB) "+
			"and %s (hipcc's build, %d KiB): `kiln rescore --pending RUN` on an AMD gfx1100 host with ROCm runs both and compares their output",
			gpuErr, ArtifactAMDProgram, len(bins[0])>>10, ArtifactAMDReference, len(bins[1])>>10))
		return nil
	}
	return l.runAMD(ctx, b, bins[0], bins[1])
}

// runAMD runs the reference and the answer's program in the sandbox on the
// AMD GPU and records amd-run. A reference that fails, or a sandbox that
// cannot reach the GPU, is the host's fault: an error, not a verdict.
func (l *Lane) runAMD(ctx context.Context, b *verdict, program, reference []byte) error {
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return fmt.Errorf("amd-run: %w", err)
	}
	defer box.Close()
	for name, bin := range map[string][]byte{amdProgram: program, amdReference: reference} {
		if err := box.WriteFile(name, bin, 0o755); err != nil {
			return fmt.Errorf("amd-run: %w", err)
		}
	}
	probe, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"/bin/sh", "-c", "test -c " + l.cfg.KFD}, GPU: true, Limits: l.cfg.RunLimits})
	if err != nil {
		return fmt.Errorf("amd-run: %w", err)
	}
	if !probe.OK() {
		return fmt.Errorf("amd-run: %w (the host has it, the sandbox view does not show it): not run", ErrSandboxNoKFD)
	}
	start := time.Now()
	var out [2]sandboxes.Result
	for i, exe := range []string{amdReference, amdProgram} {
		r, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"./" + exe}, GPU: true, Limits: l.cfg.RunLimits, KillOnOutputCap: true})
		if err != nil {
			return fmt.Errorf("amd-run %s: %w", exe, err)
		}
		out[i] = r
	}
	dur := time.Since(start)
	if !out[0].OK() {
		return fmt.Errorf("amd-run: the reference program %s on this host (not the answer's fault): %s", out[0].Describe(),
			buildjob.FirstLines(string(out[0].Stderr), 5))
	}
	b.v.Artifacts[ArtifactOutputReference], b.v.Artifacts[ArtifactOutputAnswer] = out[0].Stdout, out[1].Stdout
	b.v.Measurements["run_reference_ms"], b.v.Measurements["run_answer_ms"] = ms(out[0].Wall), ms(out[1].Wall)
	if r := out[1]; !r.OK() {
		class := tools.ClassCrash
		switch r.Outcome() {
		case sandboxes.OutcomeTimeout:
			class = tools.ClassTimeout
		case sandboxes.OutcomeResourceLimit:
			class = tools.ClassResourceLimit
		}
		b.fail(StageAMDRun, class, "the program with the answer's kernels "+r.Describe()+"\nstderr: "+buildjob.FirstLines(string(r.Stderr), 5), dur)
		return nil
	}
	if diff := cudasynth.CompareOutputs(out[0].Stdout, out[1].Stdout, l.cfg.Tolerance, l.cfg.DiagnosticLines); diff != "" {
		b.fail(StageAMDRun, tools.ClassWrongOutput, "the answer's kernels print different results from hipcc's:\n"+diff, dur)
		return nil
	}
	b.ok(StageAMDRun, fmt.Sprintf("outputs agree with hipcc's build (%d bytes)", len(out[0].Stdout)), dur)
	return nil
}

// Complete finishes the amd-run stage of prev, a verdict whose CPU stages
// passed and whose run was left pending, on a host with an AMD gfx1100 GPU:
// it runs the amd_program and amd_reference_program kept with the verdict
// in the sandbox and compares their outputs, without any compiler. On a
// host without such a GPU it returns an error wrapping ErrNoAMDGPU and
// changes nothing. Not yet tested on AMD hardware; the sandbox must also
// expose /dev/kfd to GPU runs, which it does not yet (ErrSandboxNoKFD).
func (l *Lane) Complete(ctx context.Context, item tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	pending := tools.PendingStages(prev)
	if len(pending) == 0 {
		return prev, nil
	}
	if !slices.Equal(pending, []string{StageAMDRun}) {
		return tools.Verdict{}, fmt.Errorf("sass2rdna complete: cannot complete pending stages %s (only %s)", strings.Join(pending, ", "), StageAMDRun)
	}
	if err := l.amdGPU(); err != nil {
		return tools.Verdict{}, fmt.Errorf("sass2rdna complete: %w; the pending %s stages need one", err, StageAMDRun)
	}
	prog, ref := prev.Artifacts[ArtifactAMDProgram], prev.Artifacts[ArtifactAMDReference]
	for name, bin := range map[string][]byte{ArtifactAMDProgram: prog, ArtifactAMDReference: ref} {
		if !bytes.HasPrefix(bin, []byte("\x7fELF")) {
			return tools.Verdict{}, fmt.Errorf("sass2rdna complete: the record keeps no %s executable; rescore it where llvm-mc and hipcc are (plain `kiln rescore`)", name)
		}
	}
	b := &verdict{v: tools.Verdict{Pass: true, Artifacts: maps.Clone(prev.Artifacts), Measurements: maps.Clone(prev.Measurements)}, start: time.Now()}
	if b.v.Measurements == nil {
		b.v.Measurements = map[string]float64{}
	}
	for _, s := range prev.Stages {
		if s.Skipped {
			continue
		}
		if !s.OK {
			return tools.Verdict{}, fmt.Errorf("sass2rdna complete: stage %s failed and %s is still pending: the record is inconsistent", s.Name, StageAMDRun)
		}
		b.v.Stages = append(b.v.Stages, s)
		b.v.Stage = s.Name
	}
	delete(b.v.Artifacts, ArtifactAMDProgram)
	delete(b.v.Artifacts, ArtifactAMDReference)
	delete(b.v.Measurements, "pending_stages")
	verifyMS, had := prev.Measurements["verify_ms"]
	if err := l.runAMD(ctx, b, prog, ref); err != nil {
		return tools.Verdict{}, fmt.Errorf("sass2rdna complete: %w", err)
	}
	v := b.done()
	v.Measurements["complete_ms"] = v.Measurements["verify_ms"]
	if had {
		v.Measurements["verify_ms"] = verifyMS
	}
	return v, nil
}
