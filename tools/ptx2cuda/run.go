package ptx2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
)

// Executables in the run box.
const (
	refExe = "reference"
	ansExe = "answer"
)

var (
	kernelMSRE      = regexp.MustCompile(`(?m)^kiln_kernel_ms ([0-9.eE+-]+)`)
	inputModifiedRE = regexp.MustCompile(`(?m)^kiln_input_modified (\S+)`)
)

// maxNAE stands for an infinite NAE in measurements (JSON has no Inf).
const maxNAE = 1e308

// skipRunStages records run and compare as skipped on a host without a
// GPU, keeping kept (artifacts: the what a GPU host runs, and their spec)
// and a GPU probe for Complete.
func (l *Lane) skipRunStages(ctx context.Context, b *verdictBuilder, what string, kept map[string][]byte) {
	why := "skipped: no NVIDIA GPU on this host; `kiln rescore --pending` on a GPU host runs the kept " + what
	b.add(stageResult{name: StageRun, skipped: true, detail: why})
	b.add(stageResult{name: StageCompare, skipped: true, detail: why})
	for name, data := range kept {
		b.artifacts[name] = data
	}
	if probe, err := l.probe.Binary(ctx); err == nil {
		b.artifacts[ArtifactGPUProbe] = probe
	} else {
		l.log.Warn("gpu probe not kept with the pending verdict", "err", err)
	}
}

// gpuBox takes a GPU run slot, checks the GPU (probe: a kept probe
// executable; nil builds it) and opens a box holding exes (name:
// executable). done closes the box and frees the slot.
func (l *Lane) gpuBox(ctx context.Context, probe []byte, exes map[string][]byte) (box *sandboxes.Box, done func(), err error) {
	if err := l.gpu.Acquire(ctx); err != nil {
		return nil, nil, context.Cause(ctx)
	}
	defer func() {
		if err != nil {
			l.gpu.Release()
		}
	}()
	if err := l.probe.Check(ctx, probe); err != nil {
		return nil, nil, err
	}
	if box, err = l.cfg.Sandbox.Open(ctx); err != nil {
		return nil, nil, fmt.Errorf("run: %w", err)
	}
	for name, bin := range exes {
		if err := box.WriteFile(name, bin, 0o755); err != nil {
			box.Close()
			return nil, nil, fmt.Errorf("run: %w", err)
		}
	}
	return box, func() { box.Close(); l.gpu.Release() }, nil
}

// runStages records run and compare: skipped without a GPU (keeping what
// Complete needs), else both programs run and their outputs compared.
// probe is a kept GPU probe executable (nil: build or take it from the
// cache).
func (l *Lane) runStages(ctx context.Context, b *verdictBuilder, h HarnessSpec, ansBin, refBin, probe []byte) error {
	gpu := l.cfg.Toolchains.GPU()
	if !gpu.Present {
		spec, err := json.Marshal(h)
		if err != nil {
			return err
		}
		l.skipRunStages(ctx, b, "executables", map[string][]byte{ArtifactAnswerBin: ansBin, ArtifactRefBin: refBin, ArtifactSpec: spec})
		return nil
	}
	box, done, err := l.gpuBox(ctx, probe, map[string][]byte{refExe: refBin, ansExe: ansBin})
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	run := func(exe string) (sandboxes.Result, []byte, error) {
		out := exe + ".bin"
		r, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"./" + exe, out}, Limits: l.cfg.RunLimits, KillOnOutputCap: true, GPU: true})
		if err != nil {
			return r, nil, fmt.Errorf("run %s: %w", exe, err)
		}
		if !r.OK() {
			return r, nil, nil
		}
		data, err := box.ReadFile(out, l.cfg.RunLimits.FileSize)
		if errors.Is(err, os.ErrNotExist) {
			return r, nil, nil
		}
		if err != nil {
			return r, nil, fmt.Errorf("run %s: %w", exe, err)
		}
		return r, data, nil
	}
	refRun, refOut, err := run(refExe)
	if err != nil {
		return err
	}
	if refOut == nil {
		return fmt.Errorf("%w: the reference kernel %s: %s", tools.ErrBadItem, refRun.Describe(), buildjob.FirstLines(string(refRun.Stderr), 5))
	}
	if m := inputModifiedRE.FindStringSubmatch(string(refRun.Stdout)); m != nil {
		return fmt.Errorf("%w: the reference kernel modifies its input %s (declare it inout)", tools.ErrBadItem, m[1])
	}
	ansRun, ansOut, err := run(ansExe)
	if err != nil {
		return err
	}
	dur := time.Since(start)
	b.meas["run_ms"] = ms(dur)
	if class, bad := runClass(ansRun); bad || ansOut == nil {
		if !bad {
			class = tools.ClassCrash
		}
		diag := "the answer's program " + ansRun.Describe()
		if s := buildjob.FirstLines(string(ansRun.Stderr), 5); s != "" {
			diag += "\nstderr: " + s
		}
		b.add(stageResult{name: StageRun, class: class, detail: diag, dur: dur})
		return nil
	}
	refMS, ansMS := kernelMS(refRun.Stdout), kernelMS(ansRun.Stdout)
	b.add(stageResult{name: StageRun, ok: true, dur: dur,
		detail: fmt.Sprintf("both ran (%s): kernel %.4f ms, reference %.4f ms", strings.Join(l.cfg.Toolchains.GPU().Names, ", "), ansMS, refMS)})
	if ansMS > 0 && refMS > 0 {
		b.meas["kernel_ms_answer"] = ansMS
		b.meas["kernel_ms_reference"] = refMS
		b.meas["latency_ratio"] = ansMS / refMS
	}
	cmp := l.compare(h, refOut, ansOut, ansRun.Stdout)
	b.add(cmp)
	for _, d := range cmp.diffs {
		b.meas["nae_max"] = max(b.meas["nae_max"], min(d.NAE, maxNAE))
	}
	return nil
}

// compare is the compare stage.
func (l *Lane) compare(h HarnessSpec, refOut, ansOut, ansStdout []byte) stageResult {
	start := time.Now()
	if m := inputModifiedRE.FindAllStringSubmatch(string(ansStdout), -1); m != nil {
		var names []string
		for _, x := range m {
			names = append(names, x[1])
		}
		return stageResult{name: StageCompare, class: tools.ClassWrongOutput, dur: time.Since(start),
			detail: "the kernel modified its input(s) " + strings.Join(names, ", ") + " (the original only reads them)"}
	}
	diffs, err := CompareOutputs(h, refOut, ansOut)
	if err != nil {
		return stageResult{name: StageCompare, class: tools.ClassWrongOutput, detail: err.Error(), dur: time.Since(start)}
	}
	return compareResult(diffs, l.cfg.Threshold, time.Since(start))
}

// compareResult turns buffer diffs into the compare stage.
func compareResult(diffs []TensorDiff, threshold float64, dur time.Duration) stageResult {
	var bad, parts []string
	for _, d := range diffs {
		parts = append(parts, fmt.Sprintf("%s NAE %s", d.Name, fmtNAE(d.NAE)))
		if d.OK(threshold) {
			continue
		}
		if d.Exact {
			bad = append(bad, fmt.Sprintf("%s: %d element(s) differ (integers must match exactly); max |diff| %g at element %d", d.Name, d.Mismatches, d.MaxAbs, d.At))
		} else {
			bad = append(bad, fmt.Sprintf("%s: NAE %s > %g (%d element(s) differ; max |diff| %g at element %d)", d.Name, fmtNAE(d.NAE), threshold, d.Mismatches, d.MaxAbs, d.At))
		}
	}
	r := stageResult{name: StageCompare, dur: dur, diffs: diffs}
	if len(bad) > 0 {
		r.class, r.detail = tools.ClassWrongOutput, "outputs differ from the original kernel's: "+strings.Join(bad, "; ")
		return r
	}
	r.ok, r.detail = true, "outputs agree: "+strings.Join(parts, ", ")
	return r
}

func fmtNAE(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// kernelMS reads the harness's mean kernel time (0 when absent).
func kernelMS(stdout []byte) float64 {
	m := kernelMSRE.FindSubmatch(stdout)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// runClass maps a program run to a failure class; a non-zero exit (a CUDA
// error the harness caught) counts as a crash.
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
