package ptx2cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
)

// standInProgram is a host-only C program whose behaviour MODE picks:
// what a GPU program's harness run looks like from outside (stdout,
// stderr, exit status, signals, hangs), for the run and compare logic on
// a host without a GPU.
const standInProgram = `#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
int main(void)
{
#if MODE == 0      /* the probe */
    printf("kiln gpu probe ok\n");
#elif MODE == 1    /* the original */
    printf("n=1000\nsum 1234.500\nelapsed 3.2 ms\n");
#elif MODE == 2    /* the same within tolerance, another timing */
    printf("n=1000\nsum 1234.5001\nelapsed 9.9 ms\n");
#elif MODE == 3    /* another sum */
    printf("n=1000\nsum 1300.000\nelapsed 3.2 ms\n");
#elif MODE == 4    /* a program checking its own result */
    printf("n=1000\nsum 1234.600\nmismatches=3\n");
    return 1;
#elif MODE == 5    /* an error-checking macro after a CUDA error */
    fprintf(stderr, "program.cu:71: an illegal memory access was encountered\n");
    exit(1);
#elif MODE == 6
    raise(SIGSEGV);
#elif MODE == 7
    for (;;) {}
#elif MODE == 8    /* prints nothing */
#elif MODE == 9    /* the blank program: its output differs */
    printf("n=1000\nsum 0.000\nelapsed 3.1 ms\n");
#endif
    return 0;
}
`

// TestProgramRunStages runs the program harness's run and compare logic
// (programRunStages, through Complete) with real sandboxed processes on
// this host: the "GPU" is declared present and the programs are host-only
// stand-ins (standInProgram) built with gcc in the sandbox (ten nvcc
// builds cost ten times the CPU; TestProgramVerify builds with the lane's
// own nvcc job), so what is checked is the judging of what the programs
// do, not CUDA. Whether real CUDA programs run so is for a GPU host
// (TestPrepareProgramGPUCheck).
func TestProgramRunStages(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: TestPrepareProgramGPUCheck and TestGPUComplete check the real thing")
	}
	reg := testRegistry.WithGPU(toolchain.GPU{Present: true, Names: []string{"stand-in (host-only programs)"}})
	l, err := New(Config{Sandbox: testRunner, Toolchains: reg, Cache: testCache, Parallel: 1,
		RunLimits: sandboxes.Limits{Wall: 3 * time.Second, CPU: 6 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bins := map[int][]byte{}
	for mode := 0; mode <= 9; mode++ {
		job := buildjob.Command("stand-in", toolchain.GCC, []string{"-x", "c", fmt.Sprintf("-DMODE=%d", mode), "-o", exeFile, FileProgram},
			map[string][]byte{FileProgram: []byte(standInProgram)}, exeFile)
		res, err := l.builds.Run(ctx, job)
		if err != nil || !res.OK() {
			t.Fatalf("build mode %d: %v %s", mode, err, res.Entry.Stderr)
		}
		bins[mode] = res.Entry.Files[exeFile]
	}
	spec := []byte(`{"kernel": "k"}`)
	item := tools.Item{Lane: LaneName, Files: map[string]string{FileProgramSpec: string(spec), FileProgram: "int main() {}\n"}}
	pending := func(ans, ref, blank int) tools.Verdict {
		return tools.Verdict{Pass: true, Stage: StageCompare,
			Stages: []tools.Stage{{Name: StageExtract, OK: true}, {Name: StageCheck, OK: true}, {Name: StageCompile, OK: true, Detail: "built"},
				{Name: StageRun, Skipped: true}, {Name: StageCompare, Skipped: true}},
			Measurements: map[string]float64{"verify_ms": 7, "pending_stages": 2},
			Artifacts: map[string][]byte{ArtifactAnswerBin: bins[ans], ArtifactRefBin: bins[ref], ArtifactBlankBin: bins[blank],
				ArtifactProgramSpec: spec, ArtifactGPUProbe: bins[0], ArtifactAnswer: []byte("__global__ void k() {}")}}
	}
	cases := []struct {
		name            string
		ans, ref, blank int
		class           tools.FailureClass // "" pass
		stage, detail   string
		badItem         string
	}{
		{"same output", 1, 1, 9, "", StageCompare, "agrees with the original's", ""},
		{"within tolerance, timing ignored", 2, 1, 9, "", StageCompare, "agrees", ""},
		{"another sum", 3, 1, 9, tools.ClassWrongOutput, StageCompare, "line 2 (1234.500 vs 1300.000 beyond tolerance): original \"sum 1234.500\"\n    answer   \"sum 1300.000\"", ""},
		{"self-check exit 1", 4, 1, 9, tools.ClassWrongOutput, StageCompare, "exits with status 1", ""},
		{"CUDA error exit", 5, 1, 9, tools.ClassCrash, StageRun, "illegal memory access", ""},
		{"segfault", 6, 1, 9, tools.ClassCrash, StageRun, "signal", ""},
		{"hang", 7, 1, 9, tools.ClassTimeout, StageRun, "timed out", ""},
		{"blank prints the same", 1, 1, 2, "", "", "", "does not show the kernel's work"},
		{"original fails", 1, 4, 9, "", "", "", "the original program exit"},
		{"original prints nothing", 8, 8, 9, "", "", "", "prints nothing"},
	}
	for _, c := range cases {
		v, err := l.Complete(ctx, item, pending(c.ans, c.ref, c.blank))
		if c.badItem != "" {
			if !errors.Is(err, tools.ErrBadItem) || !strings.Contains(err.Error(), c.badItem) {
				t.Errorf("%s: %v, want a bad item: %q", c.name, err, c.badItem)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		detail := v.Diagnostic
		if v.Pass {
			detail = v.Stages[len(v.Stages)-1].Detail
		}
		if v.Pass != (c.class == tools.ClassNone) || v.Class != c.class || v.Stage != c.stage || !strings.Contains(detail, c.detail) {
			t.Errorf("%s: pass %v class %q at %s (%s), want %q at %s with %q", c.name, v.Pass, v.Class, v.Stage, detail, c.class, c.stage, c.detail)
			continue
		}
		if len(tools.PendingStages(v)) > 0 || v.Measurements["verify_ms"] != 7 || v.Measurements["pending_stages"] != 0 {
			t.Errorf("%s: pending %v, measurements %v", c.name, tools.PendingStages(v), v.Measurements)
		}
		for _, a := range []string{ArtifactAnswerBin, ArtifactRefBin, ArtifactBlankBin, ArtifactProgramSpec, ArtifactGPUProbe} {
			if _, kept := v.Artifacts[a]; kept {
				t.Errorf("%s: %s kept after completion", c.name, a)
			}
		}
		if c.stage == StageCompare && (len(v.Artifacts[ArtifactOutputReference]) == 0 || len(v.Artifacts[ArtifactOutputAnswer]) == 0) {
			t.Errorf("%s: outputs not kept", c.name)
		}
	}
}
