package sass2rdna

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

var regenerate = flag.Bool("regenerate", false, "rewrite the prepared SASS of the builtin sets (sass/) and the script answers (corpus/answers.jsonl); needs nvcc, cuobjdump and hipcc")

// TestPreparedSASS: every builtin program has its prepared SASS and kernel
// list; rebuilding one program gives the committed text. With
// -regenerate it rewrites sass/builtin, sass/bench and corpus/answers.jsonl.
func TestPreparedSASS(t *testing.T) {
	if *regenerate {
		regenerateAll(t) // before the tests that read what it rewrites
		return
	}
	t.Parallel()
	items, err := SetItems(SetBuiltin)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 47 {
		t.Errorf("%d builtin programs, want the 47 translatable ones of the cuda-synth corpus", len(items))
	}
	for _, it := range items {
		if !strings.Contains(it.SASS, "Function : ") || len(it.Kernels) == 0 {
			t.Errorf("%s: SASS without a function or no kernel", it.ID)
		}
	}
	l := testLane(t, toolchain.NVCC, toolchain.CUObjdump)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, it := range items {
		if it.ID != exampleID && it.ID != "sim_01_cloth_mass_spring" {
			continue
		}
		again := it
		again.SASS, again.Kernels = "", nil
		if err := l.Prepare(ctx, &again); err != nil {
			t.Fatal(err)
		}
		if again.SASS != it.SASS {
			t.Errorf("%s: the SASS nvcc prints now differs from the committed one (regenerate with -regenerate)", it.ID)
		}
		if !slices.Equal(again.Kernels, it.Kernels) {
			t.Errorf("%s: kernels %v, committed %v", it.ID, again.Kernels, it.Kernels)
		}
		// The committed file is the deterministic gzip of that text.
		dir := t.TempDir()
		if err := WritePrepared(dir, again); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, it.ID+".sass.gz"))
		want, _ := laneFS.ReadFile("sass/builtin/" + it.ID + ".sass.gz")
		if string(got) != string(want) {
			t.Logf("%s: the gzip bytes differ from the committed file (the text is the same: a compress/flate change?)", it.ID)
		}
	}
}

// regenerateAll rewrites the prepared SASS of the builtin sets and the
// script answers.
func regenerateAll(t *testing.T) {
	l := testLane(t, toolchain.NVCC, toolchain.CUObjdump)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	items, err := BuiltinItems()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.PrepareAll(ctx, items, filepath.Join("sass", SetBuiltin), testWriter{t}); err != nil {
		t.Fatal(err)
	}
	bfs, root, err := Bench()
	if err != nil {
		t.Fatal(err)
	}
	bench, err := LoadPrograms(bfs, root, SetBench)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.PrepareAll(ctx, bench, filepath.Join("sass", SetBench), testWriter{t}); err != nil {
		t.Fatal(err)
	}
	// The script answers: hipcc's assembly, legalised for llvm-mc, and
	// checked to pass every CPU stage.
	var lines []string
	asIs := 0
	for _, it := range items {
		item := tools.Item{Lane: LaneName, Files: map[string]string{FileCUDA: it.CUDA, FileHIP: it.HIP},
			Meta: map[string]string{MetaKernels: strings.Join(it.Kernels, " ")}}
		ref, err := l.Reference(ctx, item)
		if err != nil {
			t.Fatal(err)
		}
		asm, n, err := LegaliseMad64(ref.RDNA3)
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		asm = normalise(asm) // comments and blanks out, as CASS kept assembly
		if n == 0 {
			asIs++
		}
		v, err := l.Verify(ctx, item, asm)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Pass {
			t.Fatalf("%s: the legalised reference fails: %s at %s: %s", it.ID, v.Class, v.Stage, v.Diagnostic)
		}
		note := "hipcc's gfx1100 assembly of the HIP translation, comments removed"
		if n > 0 {
			note += fmt.Sprintf(", with %d v_mad_u64_u32 destination(s) moved off their sources for llvm-mc", n)
		}
		b, err := json.Marshal(answerRule{Match: `\(task ` + it.ID + `\)`, Response: "Here is the RDNA3 translation (" + note + ").\n\n```asm\n" + asm + "```"})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	if err := writeFileAtomic(AnswersFile, []byte(strings.Join(lines, "\n")+"\n")); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d answers, %d of them hipcc's assembly as printed (the others needed LegaliseMad64)", len(lines), asIs)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestBuiltinAnswers: every script answer passes every CPU stage of its
// task, leaving amd-run pending; it logs how many answers are hipcc's
// output as printed and their mean opcode similarity to it. The default
// tier verifies every sixteenth answer (3 of 47; every eighth was 6);
// TestBuiltinAnswersRest (-tags long) the others.
func TestBuiltinAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: verifies builtin answers")
	}
	t.Parallel()
	checkBuiltinAnswers(t, func(i int) bool { return i%builtinSample == 0 })
}

// builtinSample: the default tier verifies answer 0, builtinSample, ...
const builtinSample = 16

// checkBuiltinAnswers verifies the builtin answers whose index keep
// accepts.
func checkBuiltinAnswers(t *testing.T, keep func(i int) bool) {
	l := testLane(t)
	all, err := SetItems(SetBuiltin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var mu sync.Mutex // guards the tally
	sum, asIs, n := 0.0, 0, 0
	t.Run("answers", func(t *testing.T) {
		for i, it := range all {
			if !keep(i) {
				continue
			}
			n++
			t.Run(it.ID, func(t *testing.T) {
				t.Parallel()
				similarity, legalised := checkBuiltinAnswer(ctx, t, l, it)
				mu.Lock()
				defer mu.Unlock()
				sum += similarity
				if !legalised {
					asIs++
				}
			})
		}
	})
	t.Logf("%d of %d answers pass every CPU stage; %d are hipcc's output as printed (the rest legalised); mean opcode similarity %.4f",
		n, len(all), asIs, sum/float64(n))
}

// checkBuiltinAnswer verifies it's script answer: it passes every CPU
// stage, amd-run pending. It returns the answer's opcode similarity and
// whether hipcc's assembly of the reference needed legalising.
func checkBuiltinAnswer(ctx context.Context, t *testing.T, l *Lane, it Item) (float64, bool) {
	answer, err := BuiltinAnswer(it.ID)
	if err != nil {
		t.Fatal(err)
	}
	item := tools.Item{Lane: LaneName, Files: map[string]string{FileCUDA: it.CUDA, FileHIP: it.HIP},
		Meta: map[string]string{MetaKernels: strings.Join(it.Kernels, " ")}}
	v, err := l.Verify(ctx, item, answer)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || !slices.Equal(tools.PendingStages(v), []string{StageAMDRun}) {
		t.Errorf("%s: %s at %s: %.300s", it.ID, v.Class, v.Stage, v.Diagnostic)
	}
	ref, err := l.Reference(ctx, item)
	if err != nil {
		t.Fatal(err)
	}
	return v.Measurements["opcode_similarity"], len(scanAsm(ref.RDNA3).madOverlaps) > 0
}
