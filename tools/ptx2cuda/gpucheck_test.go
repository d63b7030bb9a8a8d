package ptx2cuda

// The two-phase GPU check: every builtin and bench task's reference
// answer, and the deliberately wrong kernels of testdata/wrong, are
// verified on the CPU host (compiled with nvcc 11.8; run and compare
// pending) and saved with their executables; on the GPU host (no nvcc
// 11.8 there) gpu_test.go completes each saved verdict and checks that
// the references pass with NAE 0 and the wrong kernels fail with their
// classes. See gpu_test.go for the commands.

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
)

// wrongAnswers are kernels that compile against a task but compute
// something else, crash or hang, with the class the GPU stages must give.
var wrongAnswers = []struct {
	file, task string
	class      tools.FailureClass
}{
	{"saxpy_sign.cu", "ew_saxpy/base", tools.ClassWrongOutput},
	{"block_sum_short_tree.cu", "red_block_sum/b256", tools.ClassWrongOutput},
	{"histogram_racy.cu", "red_histogram/base", tools.ClassWrongOutput},
	{"stencil1d_no_halo.cu", "st_stencil1d/base", tools.ClassWrongOutput},
	{"softmax_writes_input.cu", "norm_softmax/b256", tools.ClassWrongOutput},
	{"transpose_oob.cu", "dm_transpose/t32r8", tools.ClassCrash},
	{"gemv_spin.cu", "mm_gemv_warp/w4", tools.ClassTimeout},
}

// gpuEntry is one saved verdict of the GPU check.
type gpuEntry struct {
	// Task is "<item>/<variant>"; Answer "reference" or a testdata/wrong
	// file; Corpus builtin or bench.
	Task, Answer, Corpus string
	// Expect is "pass" or the failure class the GPU stages must give.
	Expect  string
	Item    tools.Item
	Verdict tools.Verdict
	// Artifacts name the verdict's artifacts by the SHA-256 of their
	// content, stored gzipped as blobs/<sum>.gz.
	Artifacts map[string]string
}

const gpuIndex = "verdicts.json"

// saveGPUCheck writes entries (and their artifacts, once per content) to
// dir.
func saveGPUCheck(dir string, entries []gpuEntry, arts []map[string][]byte) error {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
		return err
	}
	for i := range entries {
		entries[i].Artifacts = map[string]string{}
		for name, b := range arts[i] {
			sum := sha256.Sum256(b)
			h := hex.EncodeToString(sum[:])
			entries[i].Artifacts[name] = h
			p := filepath.Join(dir, "blobs", h+".gz")
			if _, err := os.Stat(p); err == nil {
				continue
			}
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			if _, err := zw.Write(b); err != nil {
				return err
			}
			if err := zw.Close(); err != nil {
				return err
			}
			if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
				return err
			}
		}
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, gpuIndex), b, 0o644)
}

// loadGPUCheck reads dir's entries with their artifacts put back.
func loadGPUCheck(dir string) ([]gpuEntry, error) {
	b, err := os.ReadFile(filepath.Join(dir, gpuIndex))
	if err != nil {
		return nil, err
	}
	var entries []gpuEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", gpuIndex, err)
	}
	blobs := map[string][]byte{}
	for i := range entries {
		entries[i].Verdict.Artifacts = map[string][]byte{}
		for name, h := range entries[i].Artifacts {
			if _, ok := blobs[h]; !ok {
				f, err := os.Open(filepath.Join(dir, "blobs", h+".gz"))
				if err != nil {
					return nil, err
				}
				zr, err := gzip.NewReader(f)
				if err != nil {
					f.Close()
					return nil, err
				}
				data, err := io.ReadAll(zr)
				f.Close()
				if err != nil {
					return nil, err
				}
				blobs[h] = data
			}
			entries[i].Verdict.Artifacts[name] = blobs[h]
		}
	}
	return entries, nil
}

// TestPrepareGPUCheck is the GPU check's first phase, on the CPU host:
// with -ptx2cuda.gpudir=DIR it verifies every builtin and bench task's
// reference and the wrong kernels, requires each to compile with run and
// compare pending, and saves the verdicts with their executables (gzipped,
// once per content) and the toolchain report to DIR.
func TestPrepareGPUCheck(t *testing.T) {
	if *gpuDirFlag == "" || gpuPhase {
		t.Skip("the GPU check's first phase runs with -ptx2cuda.gpudir on the CPU host")
	}
	needNVCC(t)
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: run and compare would not be left pending")
	}
	dir, err := filepath.Abs(*gpuDirFlag)
	if err != nil {
		t.Fatal(err)
	}
	builtin, bench := loadBoth(t)
	l := lane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var entries []gpuEntry
	var arts []map[string][]byte
	verify := func(it Item, variant, answerName, answer, expect string) {
		h, err := it.Harness(variant)
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := json.MarshalIndent(h, "", "  ")
		item := tools.Item{Lane: LaneName, Files: map[string]string{FileKernel: it.Kernel, FileHarness: string(spec) + "\n"}}
		v, err := l.Verify(ctx, item, answer)
		if err != nil {
			t.Fatalf("%s %s: %v", TaskID(it.ID, variant), answerName, err)
		}
		if !v.Pass || len(tools.PendingStages(v)) != 2 {
			t.Errorf("%s %s: %v %s at %s: %s", TaskID(it.ID, variant), answerName, v.Pass, v.Class, v.Stage, v.Diagnostic)
			return
		}
		arts = append(arts, v.Artifacts)
		v.Artifacts = nil
		entries = append(entries, gpuEntry{Task: TaskID(it.ID, variant), Answer: answerName, Corpus: it.Set, Expect: expect,
			Item: item, Verdict: v})
	}
	byTask := map[string]Item{}
	for _, set := range [][]Item{builtin, bench} {
		for _, it := range set {
			for _, v := range it.Meta.Variants {
				byTask[TaskID(it.ID, v.Name)] = it
				verify(it, v.Name, "reference", it.Kernel, "pass")
			}
		}
	}
	for _, w := range wrongAnswers {
		src, err := os.ReadFile(filepath.Join("testdata", "wrong", w.file))
		if err != nil {
			t.Fatal(err)
		}
		it, ok := byTask[w.task]
		if !ok {
			t.Fatalf("%s: no task %s", w.file, w.task)
		}
		variant := w.task[strings.LastIndex(w.task, "/")+1:]
		verify(it, variant, w.file, string(src), string(w.class))
	}
	if t.Failed() {
		return
	}
	if err := saveGPUCheck(dir, entries, arts); err != nil {
		t.Fatal(err)
	}
	rep, err := json.MarshalIndent(testRegistry.Report(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "toolchain.json"), rep, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d verdicts saved to %s", len(entries), dir)
}
