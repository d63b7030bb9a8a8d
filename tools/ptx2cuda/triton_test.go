package ptx2cuda

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// tritonManifest is a harvest recorded on an H100 (torch 2.11, triton
// 3.6): five problems, trimmed from a run over the torch2cuda starter set,
// plus a problem that failed.
func tritonManifest(t *testing.T) TritonManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "triton_manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m TritonManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func tritonItemByKernel(t *testing.T, items []Item, kernel string) Item {
	t.Helper()
	for _, it := range items {
		if it.Meta.Kernel == kernel {
			return it
		}
	}
	t.Fatalf("no item of kernel %s", kernel)
	return Item{}
}

func TestTritonItems(t *testing.T) {
	t.Parallel()
	m := tritonManifest(t)
	items, skips := TritonItems(m)
	if len(items) != 6 {
		t.Fatalf("%d items, want the 6 kernels", len(items))
	}
	if len(skips) != 1 || skips[0].Reason != SkipTritonProblem || skips[0].Record != "level9/broken" {
		t.Fatalf("skips %v", skips)
	}
	gelu := tritonItemByKernel(t, items, "triton_poi_fused_gelu_0")
	if gelu.ID != "l1_026_gelu_poi_fused_gelu_0" || gelu.Meta.Category != "elementwise" || gelu.Meta.PTXExtraParams != 2 {
		t.Errorf("gelu item: id %s category %s extra %d", gelu.ID, gelu.Meta.Category, gelu.Meta.PTXExtraParams)
	}
	h, err := gelu.Harness(TritonVariant)
	if err != nil {
		t.Fatal(err)
	}
	if h.Reference != ReferencePTX || h.ExtraParams != 2 || h.Grid != [3]int64{32768, 1, 1} || h.Block != [3]int64{256, 1, 1} {
		t.Errorf("gelu harness %+v", h)
	}
	if got := h.Signature(); got != "__global__ void triton_poi_fused_gelu_0(const float* in_ptr0, float* out_ptr0, int xnumel)" {
		t.Errorf("signature %s", got)
	}
	if p := h.Params[0]; p.Role != RoleIn || p.Count != 16777216 || !strings.HasPrefix(p.Init, "uniform(-") {
		t.Errorf("in_ptr0 %+v", p)
	}
	if p := h.Params[1]; p.Role != RoleOut || p.Init != "const(0)" {
		t.Errorf("out_ptr0 %+v", p)
	}
	// A reduction with an int64 index input, an inout scalar buffer and
	// dynamic shared memory; xnumel was specialised to 1 (constexpr).
	nll := tritonItemByKernel(t, items, "triton_red_fused__log_softmax_nll_loss_forward_sub_1")
	h, err = nll.Harness(TritonVariant)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range h.Params {
		names = append(names, p.Name+":"+p.Type+":"+p.Role)
	}
	want := "in_out_ptr0:float*:inout in_ptr0:const long long*:in in_ptr1:const float*:in in_ptr2:const float*:in in_ptr3:const float*:in r0_numel:int:"
	if strings.Join(names, " ") != want {
		t.Errorf("nll params\n got %s\nwant %s", strings.Join(names, " "), want)
	}
	if p := h.Params[1]; !strings.HasPrefix(p.Init, "int(0,") {
		t.Errorf("the class indices are filled with %s, want their recorded range", p.Init)
	}
	if h.Shared != 16384 || h.Block[0] != 512 || nll.Meta.Category != "reduction" {
		t.Errorf("nll: shared %d block %v category %s", h.Shared, h.Block, nll.Meta.Category)
	}

	// The same PTX twice is one item; an unsupported type, scratch and a
	// parameter count the PTX does not have are skipped with their reason.
	k := m.Problems[0].Kernels[0]
	bad := func(mut func(*TritonLaunch)) TritonLaunch {
		c := k
		c.Params = append([]TritonParam(nil), k.Params...)
		mut(&c)
		return c
	}
	m2 := TritonManifest{Problems: []TritonProblem{{ID: "level1/x", Kernels: []TritonLaunch{
		k, k,
		bad(func(c *TritonLaunch) { c.Params[0].Type = "*fp16"; c.PTX += "\n" }),
		bad(func(c *TritonLaunch) { c.GlobalScratch = 128; c.PTX += "\n\n" }),
		bad(func(c *TritonLaunch) { c.Params = c.Params[1:]; c.PTX += "\n\n\n" }),
	}}}}
	items, skips = TritonItems(m2)
	var reasons []string
	for _, s := range skips {
		reasons = append(reasons, s.Reason)
	}
	if len(items) != 1 || strings.Join(reasons, " ") != "duplicate_ptx unsupported_type needs_scratch param_mismatch" {
		t.Errorf("%d items, skips %v", len(items), skips)
	}
}

// TestTritonItemFolder: harvested items written to a folder load as a
// corpus and become tasks whose reference is the PTX.
func TestTritonItemFolder(t *testing.T) {
	t.Parallel()
	items, _ := TritonItems(tritonManifest(t))
	dir := t.TempDir()
	for _, it := range items {
		if err := WriteTritonItem(dir, it); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := LoadCorpus(os.DirFS(dir), ".", dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != len(items) {
		t.Fatalf("%d items loaded, %d written", len(loaded), len(items))
	}
	for _, l := range loaded {
		w := tritonItemByKernel(t, items, l.Meta.Kernel)
		if !reflect.DeepEqual(l.Meta, w.Meta) || l.PTX[TritonVariant] != w.PTX[TritonVariant] || l.Kernel != "" {
			t.Errorf("%s: loaded item differs from the written one", l.ID)
		}
	}
	ts, err := source(kit.Tasks{Corpus: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Round0) != len(items) {
		t.Fatalf("%d tasks", len(ts.Round0))
	}
	for _, task := range ts.Round0 {
		if _, ok := task.Files[FileKernel]; ok {
			t.Errorf("%s: a Triton task has a %s", task.Key, FileKernel)
		}
		h, err := ParseHarness([]byte(task.Files[FileHarness]))
		if err != nil || h.Reference != ReferencePTX || task.Files[FilePTX] == "" {
			t.Errorf("%s: harness %+v (%v)", task.Key, h, err)
		}
		if !strings.Contains(task.Prompt, h.Signature()) || !strings.Contains(task.Prompt, ".entry "+h.Kernel) {
			t.Errorf("%s: the prompt lacks the signature or the PTX", task.Key)
		}
	}

	// A PTX whose entry does not take the recorded parameters is refused
	// by name.
	it := items[0]
	b, _ := os.ReadFile(filepath.Join(dir, it.ID, MetaFile))
	b = []byte(strings.Replace(string(b), `"ptx_extra_params": 2`, `"ptx_extra_params": 1`, 1))
	if err := os.WriteFile(filepath.Join(dir, it.ID, MetaFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCorpus(os.DirFS(dir), ".", dir, true); err == nil || !strings.Contains(err.Error(), "triton.ptx") ||
		!strings.Contains(err.Error(), "parameters") {
		t.Errorf("mismatched PTX: %v", err)
	}
}

// TestTritonVerify builds a Triton task's PTX reference (the driver-API
// launcher) and answers into the harness with the real nvcc in the
// sandbox: a right answer passes with the GPU stages pending, a wrong
// signature fails to compile, an answer that embeds the PTX is caught.
func TestTritonVerify(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: the GPU check runs the stages")
	}
	items, _ := TritonItems(tritonManifest(t))
	gelu := tritonItemByKernel(t, items, "triton_poi_fused_gelu_0")
	dir := t.TempDir()
	if err := WriteTritonItem(dir, gelu); err != nil {
		t.Fatal(err)
	}
	item, err := ItemFromDir(filepath.Join(dir, gelu.ID), "")
	if err != nil {
		t.Fatal(err)
	}
	answer, err := os.ReadFile(filepath.Join("testdata", "triton_answers", "gelu.cu"))
	if err != nil {
		t.Fatal(err)
	}
	l := lane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v, err := l.Verify(ctx, item, string(answer))
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || !equalStrings(tools.PendingStages(v), []string{StageRun, StageCompare}) {
		t.Fatalf("right answer: %v %s at %s: %s (pending %v)", v.Pass, v.Class, v.Stage, v.Diagnostic, tools.PendingStages(v))
	}
	if !strings.HasPrefix(string(v.Artifacts[ArtifactRefBin]), "\x7fELF") {
		t.Error("no reference executable")
	}
	wrongSig := strings.Replace(string(answer), "const float* in_ptr0", "float* in_ptr0", 1)
	if v, err := l.Verify(ctx, item, wrongSig); err != nil || v.Pass || v.Stage != StageCompile || !strings.Contains(v.Diagnostic, "parameter types must be exactly") {
		t.Errorf("wrong signature: %v %s at %s: %s (%v)", v.Pass, v.Class, v.Stage, v.Diagnostic, err)
	}
	cheat := string(answer) + "\nconst char* k = \".visible .entry triton_poi_fused_gelu_0(\";\n"
	if v, err := l.Verify(ctx, item, cheat); err != nil || v.Pass || v.Class != ClassEmbeddedPTX {
		t.Errorf("embedded PTX: %v %s at %s: %s (%v)", v.Pass, v.Class, v.Stage, v.Diagnostic, err)
	}
	// The launcher is valid C++ for any PTX: quotes, backslashes, '?'.
	src := PTXLauncher(HarnessSpec{Kernel: "k", ExtraParams: 1}, "a \"b\" \\c ??= d\n\te\n")
	if !strings.Contains(src, `"a \"b\" \\c \?\?= d\n"`) || !strings.Contains(src, `"\te\n"`) {
		t.Errorf("escaped PTX:\n%s", src)
	}
}

// TestHarvestTritonNeedsTorch: on a host without PyTorch or without a GPU
// the harvest says what it needs.
func TestHarvestTritonNeedsTorch(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	_, torch := testRegistry.Get(toolchain.Torch)
	if torch && testRegistry.GPU().Present {
		t.Skip("this host has PyTorch and a GPU")
	}
	_, err := lane(t).HarvestTriton(context.Background(), nil, HarvestOptions{})
	if err == nil || !strings.Contains(err.Error(), "torch.compile") {
		t.Errorf("harvest without torch: %v", err)
	}
}
