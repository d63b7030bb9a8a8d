package ptx2cuda

// Triton items: the kernels torch.compile emits, as PtxDec's data
// augmentation uses them. `kiln ptx harvest-triton` runs PyTorch problems
// (KernelBench style; the torch2cuda starter set by default) through
// torch.compile on a GPU host, in the sandbox, and writes one corpus item
// per Triton kernel launched: its PTX (triton.ptx, the item's one variant),
// and a meta.json whose harness "triton" gives the parameters with the
// counts, value ranges and scalar values of the recorded launch, and the
// launch itself (grid, num_warps*32 threads, dynamic shared memory).
//
// Such an item has no CUDA reference: the reference is the PTX. Its
// reference build is the generated harness with a launcher that loads the
// PTX through the CUDA driver API (dlopen'd libcuda, so the build needs no
// driver) and launches it with the recorded configuration, passing null
// for the scratch pointers Triton appends to every kernel. The answer, a
// CUDA kernel with the task's name and parameters (the Triton kernel's, in
// order, constexpr and specialised ones left out), is built into the
// ordinary harness; both run on the same inputs and every output must
// agree within the NAE threshold, like any other ptx2cuda task.

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// HarnessTriton is Meta.Harness of a Triton item: the generated harness,
// with the PTX as the reference.
const HarnessTriton = "triton"

// ReferencePTX is HarnessSpec.Reference of a task whose reference is its
// PTX (a Triton item's).
const ReferencePTX = "ptx"

// maxTritonOutputBytes bounds a Triton item's output buffers: the run stage
// writes the answer's and the reference's outputs into one sandbox scratch
// folder (256 MiB by default).
const maxTritonOutputBytes = 96 << 20

// maxExtraParams bounds the parameters a Triton kernel's PTX has after its
// own: Triton 3.x appends its global and profile scratch pointers.
const maxExtraParams = 2

// TritonVariant is a Triton item's one variant (its PTX is triton.ptx).
const TritonVariant = "triton"

// TritonSource is the provenance of a Triton item.
type TritonSource struct {
	// Problem is the PyTorch problem's id ("level1/019_relu").
	Problem string `json:"problem"`
	// Torch, Triton and Device are the versions and the GPU of the
	// harvest.
	Torch  string `json:"torch"`
	Triton string `json:"triton"`
	Device string `json:"device"`
	// NumWarps is the launch's num_warps (Launch.Block is 32 times it).
	NumWarps int `json:"num_warps"`
}

//go:embed triton_harvest.py
var tritonHarvestScript []byte

// TritonManifest is what the harvest script writes.
type TritonManifest struct {
	Torch    string          `json:"torch"`
	Triton   string          `json:"triton"`
	Device   string          `json:"device"`
	Problems []TritonProblem `json:"problems"`
}

// TritonProblem is one problem's kernels (Error: it did not run).
type TritonProblem struct {
	ID      string         `json:"id"`
	Kernels []TritonLaunch `json:"kernels"`
	Error   string         `json:"error,omitempty"`
	Seconds float64        `json:"seconds"`
}

// TritonLaunch is a kernel's last recorded launch.
type TritonLaunch struct {
	Name           string        `json:"name"`
	PTX            string        `json:"ptx"`
	Grid           [3]int64      `json:"grid"`
	NumWarps       int           `json:"num_warps"`
	NumCTAs        int           `json:"num_ctas"`
	Shared         int64         `json:"shared"`
	GlobalScratch  int64         `json:"global_scratch"`
	ProfileScratch int64         `json:"profile_scratch"`
	Params         []TritonParam `json:"params"`
	Error          string        `json:"error,omitempty"`
}

// TritonParam is one argument of the launch, in signature order.
type TritonParam struct {
	Name string `json:"name"`
	// Type is Triton's ("*fp32", "i32", "constexpr").
	Type string `json:"type"`
	// Constexpr: a compile-time constant (a constexpr, or an argument
	// Triton specialised): not a parameter of the PTX.
	Constexpr bool          `json:"constexpr"`
	Tensor    *TritonTensor `json:"tensor,omitempty"`
	Value     any           `json:"value,omitempty"`
}

// TritonTensor is a tensor argument: its dtype, the elements from its data
// pointer to the end of its storage, and their range (finite values).
type TritonTensor struct {
	DType     string   `json:"dtype"`
	Count     int64    `json:"count"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	NonFinite bool     `json:"nonfinite,omitempty"`
}

// Skip reasons of Triton kernels.
const (
	SkipTritonProblem  = "problem_failed"
	SkipTritonCapture  = "capture_failed"
	SkipTritonType     = "unsupported_type"
	SkipTritonScratch  = "needs_scratch"
	SkipTritonCluster  = "multi_cta"
	SkipTritonLimits   = "too_large"
	SkipTritonParams   = "param_mismatch"
	SkipTritonDup      = "duplicate_ptx"
	SkipTritonNoOutput = "no_output"
)

// tritonPointer maps Triton pointer element types to the harness's.
var tritonPointer = map[string]string{
	"fp32": "float", "fp64": "double", "i32": "int", "u32": "unsigned int", "i64": "long long",
	"u64": "unsigned long long", "u8": "unsigned char", "i1": "unsigned char",
}

// tritonScalar maps Triton scalar types to C.
var tritonScalar = map[string]string{
	"i32": "int", "u32": "unsigned int", "i64": "long long", "u64": "unsigned long long", "fp32": "float", "fp64": "double",
}

var entryParamRE = regexp.MustCompile(`\.param\s+[^,)]*?\b[A-Za-z_$][\w$]*_param_\d+`)

// ptxEntryParams counts the parameters of the PTX's .entry name.
func ptxEntryParams(ptx, name string) (int, error) {
	i := strings.Index(ptx, ".entry "+name+"(")
	if i < 0 {
		return 0, fmt.Errorf("the PTX has no .entry %s", name)
	}
	rest := ptx[i:]
	j := strings.Index(rest, ")")
	if j < 0 {
		return 0, fmt.Errorf("the PTX's .entry %s has no parameter list", name)
	}
	return len(entryParamRE.FindAllString(rest[:j], -1)), nil
}

// TritonItems makes corpus items of a manifest's kernels: one per kernel
// with distinct PTX, in manifest order; what is left out is returned with
// its reason.
func TritonItems(m TritonManifest) ([]Item, []Skip) {
	var items []Item
	var skips []Skip
	seenPTX := map[string]string{}
	usedID := map[string]bool{}
	for _, p := range m.Problems {
		if p.Error != "" {
			skips = append(skips, Skip{Record: p.ID, Reason: SkipTritonProblem, Detail: p.Error})
			continue
		}
		for _, k := range p.Kernels {
			it, skip := tritonItem(m, p.ID, k)
			if skip != nil {
				skips = append(skips, *skip)
				continue
			}
			if prev, ok := seenPTX[k.PTX]; ok {
				skips = append(skips, Skip{Record: p.ID, Kernel: k.Name, Reason: SkipTritonDup, Detail: "the same PTX as " + prev})
				continue
			}
			seenPTX[k.PTX] = it.ID
			for n := 2; usedID[it.ID]; n++ {
				it.ID = fmt.Sprintf("%s_%d", strings.TrimRight(it.ID, "0123456789_"), n)
			}
			usedID[it.ID] = true
			items = append(items, it)
		}
	}
	return items, skips
}

// tritonItem makes the item of one kernel, or says why not.
func tritonItem(m TritonManifest, problem string, k TritonLaunch) (Item, *Skip) {
	skip := func(reason, format string, args ...any) (Item, *Skip) {
		return Item{}, &Skip{Record: problem, Kernel: k.Name, Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case k.Error != "":
		return skip(SkipTritonCapture, "%s", k.Error)
	case !identRE.MatchString(k.Name):
		return skip(SkipTritonCapture, "kernel name %q is not a C identifier", k.Name)
	case k.GlobalScratch > 0 || k.ProfileScratch > 0:
		return skip(SkipTritonScratch, "the kernel needs %d bytes of global and %d of profile scratch", k.GlobalScratch, k.ProfileScratch)
	case k.NumCTAs > 1:
		return skip(SkipTritonCluster, "num_ctas %d", k.NumCTAs)
	case k.NumWarps < 1 || k.NumWarps > 32:
		return skip(SkipTritonLimits, "num_warps %d", k.NumWarps)
	case k.Shared < 0 || k.Shared > maxSharedBytes:
		return skip(SkipTritonLimits, "%d bytes of shared memory", k.Shared)
	}
	var params []Param
	var total int64
	for _, p := range k.Params {
		if p.Constexpr {
			continue
		}
		if !identRE.MatchString(p.Name) {
			return skip(SkipTritonCapture, "parameter %q is not a C identifier", p.Name)
		}
		if elem, ok := strings.CutPrefix(p.Type, "*"); ok {
			c, ok := tritonPointer[elem]
			if !ok || p.Tensor == nil {
				return skip(SkipTritonType, "parameter %s of type %s", p.Name, p.Type)
			}
			t := p.Tensor
			if t.Count < 1 || t.Count > maxElements {
				return skip(SkipTritonLimits, "parameter %s has %d elements (1..%d)", p.Name, t.Count, maxElements)
			}
			total += t.Count * int64(elemTypes[c].size)
			role := tritonRole(p.Name)
			typ := c + "*"
			if role == RoleIn {
				typ = "const " + typ
			}
			params = append(params, Param{Name: p.Name, Type: typ, Role: role, Count: strconv.FormatInt(t.Count, 10), Init: tritonInit(c, role, t)})
			continue
		}
		c, ok := tritonScalar[p.Type]
		if !ok {
			return skip(SkipTritonType, "parameter %s of type %s", p.Name, p.Type)
		}
		v, err := tritonValue(c, p.Value)
		if err != nil {
			return skip(SkipTritonCapture, "parameter %s: %v", p.Name, err)
		}
		params = append(params, Param{Name: p.Name, Type: c, Value: v})
	}
	if total > maxTotalBytes {
		return skip(SkipTritonLimits, "%d bytes of buffers (at most %d)", total, maxTotalBytes)
	}
	var outBytes int64
	for _, p := range params {
		if p.Role != RoleIn {
			n, _ := strconv.ParseInt(p.Count, 10, 64)
			outBytes += n * int64(elemTypes[strings.TrimSuffix(strings.TrimPrefix(p.Type, "const "), "*")].size)
		}
	}
	if outBytes > maxTritonOutputBytes {
		return skip(SkipTritonLimits, "%d bytes of outputs (at most %d: the run writes the answer's and the reference's into one sandbox scratch)", outBytes, maxTritonOutputBytes)
	}
	hasOut := false
	for _, p := range params {
		hasOut = hasOut || (p.Role == RoleOut || p.Role == RoleInOut)
	}
	if !hasOut {
		return skip(SkipTritonNoOutput, "no out_ptr or in_out_ptr parameter")
	}
	n, err := ptxEntryParams(k.PTX, k.Name)
	if err != nil {
		return skip(SkipTritonParams, "%v", err)
	}
	extra := n - len(params)
	if extra < 0 || extra > maxExtraParams {
		return skip(SkipTritonParams, "the PTX entry has %d parameters, the launch %d", n, len(params))
	}
	meta := Meta{
		Category:       tritonCategory(k.Name, problem),
		Kernel:         k.Name,
		Description:    fmt.Sprintf("Triton kernel %s that torch.compile made for %s", k.Name, problem),
		Params:         params,
		Launch:         Launch{Grid: dimStrings(k.Grid[:]), Block: []string{strconv.Itoa(32 * k.NumWarps)}, Shared: strconv.FormatInt(k.Shared, 10)},
		Variants:       []Variant{{Name: TritonVariant}},
		Harness:        HarnessTriton,
		PTXExtraParams: extra,
		Triton:         &TritonSource{Problem: problem, Torch: m.Torch, Triton: m.Triton, Device: m.Device, NumWarps: k.NumWarps},
	}
	it := Item{ID: tritonItemID(problem, k.Name), Set: "triton", Meta: meta, PTX: map[string]string{TritonVariant: k.PTX}}
	if err := it.check(); err != nil {
		return skip(SkipTritonCapture, "%v", err)
	}
	return it, nil
}

// tritonRole is a pointer's role by inductor's naming: in_ptrN, out_ptrN,
// in_out_ptrN; another name is read back (inout).
func tritonRole(name string) string {
	switch {
	case strings.HasPrefix(name, "in_out_ptr"):
		return RoleInOut
	case strings.HasPrefix(name, "in_ptr"):
		return RoleIn
	case strings.HasPrefix(name, "out_ptr"):
		return RoleOut
	}
	return RoleInOut
}

// tritonInit fills a buffer like the recorded one: floating inputs
// uniformly over the recorded range, integer ones over their recorded
// range (indices stay in bounds), outputs with zeros.
func tritonInit(c, role string, t *TritonTensor) string {
	if role == RoleOut {
		return "const(0)"
	}
	if t.Min == nil || t.Max == nil {
		if elemTypes[c].float {
			return "uniform(-1,1)"
		}
		return "const(0)"
	}
	lo, hi := *t.Min, *t.Max
	if elemTypes[c].float {
		if lo == hi {
			return "const(" + fmtFloat(lo) + ")"
		}
		return "uniform(" + fmtFloat(lo) + "," + fmtFloat(hi) + ")"
	}
	return fmt.Sprintf("int(%d,%d)", int64(math.Floor(lo)), int64(math.Ceil(hi)))
}

// tritonValue is a scalar's value as the corpus writes it.
func tritonValue(c string, v any) (string, error) {
	f, ok := v.(float64) // JSON numbers
	if !ok {
		return "", fmt.Errorf("value %v is not a number", v)
	}
	if elemTypes[c].float {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("value %v is not finite", f)
		}
		return fmtFloat(f), nil
	}
	if f != math.Trunc(f) {
		return "", fmt.Errorf("value %v of an integer parameter", f)
	}
	return strconv.FormatInt(int64(f), 10), nil
}

// tritonCategory is a Triton kernel's category: inductor names pointwise
// kernels triton_poi_*, reductions triton_per_* and triton_red_*, and
// templates (matmul, convolution) triton_tem_*.
func tritonCategory(name, problem string) string {
	lp := strings.ToLower(problem)
	switch {
	case strings.HasPrefix(name, "triton_tem_"):
		if strings.Contains(lp, "conv") {
			return "convolution"
		}
		return "matmul"
	case strings.HasPrefix(name, "triton_per_"), strings.HasPrefix(name, "triton_red_"):
		loss := strings.Contains(name, "loss") || strings.Contains(lp, "loss") || strings.Contains(lp, "entropy")
		if strings.Contains(name, "norm") || strings.Contains(lp, "norm") || (strings.Contains(name, "softmax") && !loss) {
			return "normalization"
		}
		return "reduction"
	case strings.Contains(name, "cat") || strings.Contains(name, "clone") || strings.Contains(name, "permute"):
		return "data_movement"
	}
	return "elementwise"
}

func dimStrings(d []int64) []string {
	out := make([]string, len(d))
	for i, v := range d {
		out[i] = strconv.FormatInt(v, 10)
	}
	return out
}

// tritonItemID is an item folder name: the problem's slug and the kernel.
func tritonItemID(problem, kernel string) string {
	p := strings.NewReplacer("level", "l", "/", "_").Replace(strings.ToLower(problem))
	p = strings.Trim(slugRE.ReplaceAllString(p, "_"), "_")
	k := strings.TrimPrefix(strings.ToLower(kernel), "triton_")
	id := strings.Trim(slugRE.ReplaceAllString(p+"_"+k, "_"), "_")
	if len(id) > 80 {
		id = strings.TrimRight(id[:80], "_")
	}
	if id == "" || !nameRE.MatchString(id) {
		id = "t_" + id
	}
	return id
}

// WriteTritonItem writes it into dir/<id>: meta.json and triton.ptx.
func WriteTritonItem(dir string, it Item) error {
	d := filepath.Join(dir, it.ID)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(it.Meta, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(d, MetaFile), append(b, '\n')); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(d, TritonVariant+".ptx"), []byte(it.PTX[TritonVariant]))
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// HarvestOptions bound a harvest.
type HarvestOptions struct {
	// Wall bounds the whole run (default 30 min).
	Wall time.Duration
	// Stderr gets the script's progress lines.
	Stderr io.Writer
}

// HarvestTriton runs problems through torch.compile on this host's GPU, in
// the sandbox, and returns what the harvest script recorded. It needs the
// torch toolchain (python3 with torch and triton) and a GPU.
func (l *Lane) HarvestTriton(ctx context.Context, problems []torch2cuda.Problem, opt HarvestOptions) (TritonManifest, error) {
	var m TritonManifest
	py, ok := l.cfg.Toolchains.Get(toolchain.Torch)
	if !ok {
		return m, fmt.Errorf("ptx harvest-triton: %w (it runs torch.compile: use a GPU host with PyTorch and Triton)", l.cfg.Toolchains.Require(toolchain.Torch))
	}
	if len(l.cfg.Toolchains.GPU().Names) == 0 {
		return m, errors.New("ptx harvest-triton: no GPU on this host (torch.compile's Triton kernels are compiled and launched on one)")
	}
	if len(problems) == 0 {
		return m, errors.New("ptx harvest-triton: no problem to run")
	}
	if opt.Wall <= 0 {
		opt.Wall = 30 * time.Minute
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return m, fmt.Errorf("ptx harvest-triton: %w", err)
	}
	defer box.Close()
	type entry struct {
		ID   string `json:"id"`
		File string `json:"file"`
	}
	var list []entry
	for i, p := range problems {
		f := fmt.Sprintf("problem%03d.py", i)
		if err := box.WriteFile(f, []byte(p.Source), 0o644); err != nil {
			return m, fmt.Errorf("ptx harvest-triton: %w", err)
		}
		list = append(list, entry{ID: p.ID, File: f})
	}
	lb, _ := json.Marshal(list)
	if err := box.WriteFile("problems.json", lb, 0o644); err != nil {
		return m, fmt.Errorf("ptx harvest-triton: %w", err)
	}
	if err := box.WriteFile("harvest.py", tritonHarvestScript, 0o644); err != nil {
		return m, fmt.Errorf("ptx harvest-triton: %w", err)
	}
	env := []string{"HOME=.", "XDG_CACHE_HOME=.cache", "TRITON_CACHE_DIR=.triton", "TORCHINDUCTOR_CACHE_DIR=.inductor",
		"PYTHONDONTWRITEBYTECODE=1", "TRITON_DISABLE_LINE_INFO=1",
		"PATH=" + filepath.Dir(py.Path) + ":/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin"}
	lim := sandboxes.Limits{Wall: opt.Wall, CPU: 4 * opt.Wall, Memory: sandboxes.NoLimit, RSS: 32 << 30,
		Procs: 512, Output: 4 << 20, FileSize: 1 << 30}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{py.Path, "harvest.py", "problems.json", "manifest.json"}, Env: env, GPU: true, Limits: lim})
	if err != nil {
		return m, fmt.Errorf("ptx harvest-triton: %w", err)
	}
	if opt.Stderr != nil {
		_, _ = opt.Stderr.Write(res.Stderr)
	}
	if !res.OK() {
		return m, fmt.Errorf("ptx harvest-triton: the harvest %s: %s", res.Describe(), buildjob.FirstLines(lastLines(string(res.Stderr), 15), 15))
	}
	b, err := box.ReadFile("manifest.json", 256<<20)
	if err != nil {
		return m, fmt.Errorf("ptx harvest-triton: no manifest: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("ptx harvest-triton: manifest.json: %w", err)
	}
	return m, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ptxReferenceJob builds a Triton task's reference: the harness with a
// launcher (kernel.cu) that loads the PTX with the driver API.
func (l *Lane) ptxReferenceJob(h HarnessSpec, ptx string) buildjob.Job {
	args := []string{"-gencode", fmt.Sprintf("arch=%s,code=%s", strings.Replace(l.cfg.SM, "sm_", "compute_", 1), l.cfg.SM)}
	args = append(args, h.Flags...)
	args = append(args, "-o", exeFile, harnessFile)
	return buildjob.Command("build-ptx-reference", toolchain.NVCC, args,
		map[string][]byte{harnessFile: []byte(generateHarness(h, l.cfg.Reps, true)), kernelInBox: []byte(PTXLauncher(h, ptx))}, exeFile)
}

// referenceJob is the build of a task's reference: its kernel.cu into the
// harness, or its PTX through the driver API.
func (l *Lane) referenceJob(h HarnessSpec, ref string) buildjob.Job {
	if h.Reference == ReferencePTX {
		return l.ptxReferenceJob(h, ref)
	}
	return l.buildJob(h, ref)
}

// PTXLauncher is the kernel.cu of a PTX reference: the PTX as a string,
// and kiln_launch, which loads it once (dlopen'd libcuda.so.1: the CUDA
// runtime's context, no link-time driver) and launches h.Kernel with the
// harness's configuration and arguments, then h.ExtraParams null pointers
// (Triton's scratch parameters).
func PTXLauncher(h HarnessSpec, ptx string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("// kiln ptx2cuda: the reference %s, from its PTX through the CUDA driver API (generated)\n", h.Kernel)
	w("#include <cstdio>\n#include <cstdlib>\n#include <cuda.h>\n#include <dlfcn.h>\n\n")
	w("static const char kiln_ptx[] =\n")
	for _, line := range strings.SplitAfter(ptx, "\n") {
		if line == "" {
			continue
		}
		w("    \"%s\"\n", cEscape(line))
	}
	w("    ;\n\n")
	w(`typedef CUresult (*kiln_load_t)(CUmodule *, const void *);
typedef CUresult (*kiln_getfn_t)(CUfunction *, CUmodule, const char *);
typedef CUresult (*kiln_attr_t)(CUfunction, CUfunction_attribute, int);
typedef CUresult (*kiln_launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*kiln_errname_t)(CUresult, const char **);
static kiln_errname_t kiln_errname;
static void kiln_cu(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        const char *name = "unknown";
        if (kiln_errname)
            kiln_errname(r, &name);
        fprintf(stderr, "kiln harness: %%s: %%s (%%d)\n", what, name, (int)r);
        exit(1);
    }
}
static void *kiln_sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "kiln harness: libcuda.so.1 has no %%s\n", name);
        exit(1);
    }
    return p;
}
`)
	var ps, refs []string
	for i, p := range h.Params {
		ps = append(ps, fmt.Sprintf("%s kiln_a%d", p.Type, i))
		refs = append(refs, fmt.Sprintf("(void *)&kiln_a%d", i))
	}
	for i := 0; i < h.ExtraParams; i++ {
		refs = append(refs, fmt.Sprintf("(void *)&kiln_x%d", i))
	}
	w("static void kiln_launch(dim3 g, dim3 b, size_t shared%s)\n{\n", prefixComma(strings.Join(ps, ", ")))
	w(`    static CUfunction f;
    static kiln_launch_t launch;
    if (!f) {
        void *lib = dlopen("libcuda.so.1", RTLD_NOW);
        if (!lib) {
            fprintf(stderr, "kiln harness: dlopen libcuda.so.1: %%s\n", dlerror());
            exit(1);
        }
        kiln_errname = (kiln_errname_t)dlsym(lib, "cuGetErrorName");
        kiln_load_t load = (kiln_load_t)kiln_sym(lib, "cuModuleLoadData");
        kiln_getfn_t getfn = (kiln_getfn_t)kiln_sym(lib, "cuModuleGetFunction");
        kiln_attr_t attr = (kiln_attr_t)kiln_sym(lib, "cuFuncSetAttribute");
        launch = (kiln_launch_t)kiln_sym(lib, "cuLaunchKernel");
        CUmodule m;
        kiln_cu(load(&m, kiln_ptx), "load the reference PTX");
        kiln_cu(getfn(&f, m, "%s"), "find the reference kernel");
        if (shared > 48 * 1024)
            kiln_cu(attr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared), "dynamic shared memory attribute");
    }
`, h.Kernel)
	for i := 0; i < h.ExtraParams; i++ {
		w("    void *kiln_x%d = 0;\n", i)
	}
	w("    void *args[] = {%s};\n", strings.Join(refs, ", "))
	w("    kiln_cu(launch(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shared, 0, args, 0), \"launch the reference\");\n}\n")
	return b.String()
}

func prefixComma(s string) string {
	if s == "" {
		return ""
	}
	return ", " + s
}

// cEscape escapes a line for a C string literal.
func cEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '?':
			b.WriteString(`\?`) // no trigraphs
		case r < 0x20 || r > 0x7e:
			fmt.Fprintf(&b, `\%03o`, r&0xff)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SortSkips orders skips by reason, then record and kernel.
func SortSkips(s []Skip) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].Reason != s[j].Reason {
			return s[i].Reason < s[j].Reason
		}
		if s[i].Record != s[j].Record {
			return s[i].Record < s[j].Record
		}
		return s[i].Kernel < s[j].Kernel
	})
}

// checkTriton checks a Triton item: its one variant, its harness, and
// (when loaded) its PTX's entry and parameter count.
func (it Item) checkTriton() error {
	m := it.Meta
	if len(m.Variants) != 1 || m.Variants[0].Name != TritonVariant || len(m.Variants[0].Flags) > 0 {
		return fmt.Errorf("variants: a Triton item has one variant, %q, without flags (its PTX is %s.ptx)", TritonVariant, TritonVariant)
	}
	if m.PTXExtraParams < 0 || m.PTXExtraParams > maxExtraParams {
		return fmt.Errorf("ptx_extra_params: %d (0..%d)", m.PTXExtraParams, maxExtraParams)
	}
	h, err := it.Harness(TritonVariant)
	if err != nil {
		return err
	}
	ptx := it.PTX[TritonVariant]
	if ptx == "" {
		return nil
	}
	n, err := ptxEntryParams(ptx, m.Kernel)
	if err != nil {
		return fmt.Errorf("%s.ptx: %w", TritonVariant, err)
	}
	if n != len(h.Params)+m.PTXExtraParams {
		return fmt.Errorf("%s.ptx: .entry %s has %d parameters; params has %d and ptx_extra_params %d", TritonVariant, m.Kernel, n, len(h.Params), m.PTXExtraParams)
	}
	return nil
}

// harvestTritonCommand is `kiln ptx harvest-triton`.
func harvestTritonCommand() kit.Command {
	return kit.Command{Verb: "ptx harvest-triton", Summary: "on a GPU host with PyTorch: run PyTorch problems through torch.compile and write a corpus folder " +
		"of the Triton kernels it launched, with their PTX and recorded launches (-o DIR [--problems builtin|DIR] [--match RE] [--limit N])",
		Flags: func(fs *flag.FlagSet) func(context.Context, kit.Host, io.Writer, io.Writer) error {
			out := fs.String("o", "", "the corpus folder to write (made if missing; items of the same problem and kernel are rewritten)")
			problems := fs.String("problems", "builtin", "the PyTorch problems: builtin (torch2cuda's starter set) or a folder of KernelBench-style files (Model, get_inputs, get_init_inputs)")
			match := fs.String("match", "", "only problems whose id matches this regular expression (e.g. 'level1/0(19|2)')")
			limit := fs.Int("limit", 0, "at most this many problems (0: all)")
			wall := fs.Duration("timeout", 30*time.Minute, "wall-clock bound of the whole harvest")
			manifest := fs.String("manifest", "", "also write the harvest's raw manifest (JSON) to this file")
			return func(ctx context.Context, h kit.Host, stdout, stderr io.Writer) error {
				if *out == "" {
					return kit.BadInput("-o DIR is required: the corpus folder to write")
				}
				var re *regexp.Regexp
				if *match != "" {
					var err error
					if re, err = regexp.Compile(*match); err != nil {
						return kit.BadInput("--match: %v", err)
					}
				}
				var ps []torch2cuda.Problem
				var err error
				if *problems == "builtin" {
					ps, err = torch2cuda.LoadBuiltinProblems()
				} else {
					ps, err = torch2cuda.LoadProblems(os.DirFS(*problems), ".")
				}
				if err != nil {
					return kit.UsageError{Err: fmt.Errorf("--problems: %w", err)}
				}
				var picked []torch2cuda.Problem
				for _, p := range ps {
					if re == nil || re.MatchString(p.ID) {
						picked = append(picked, p)
					}
				}
				if *limit > 0 && len(picked) > *limit {
					picked = picked[:*limit]
				}
				if len(picked) == 0 {
					return kit.BadInput("--match %q leaves no problem of %d", *match, len(ps))
				}
				tl, err := open(ctx, h, sandboxes.Limits{})
				if err != nil {
					return err
				}
				l := tl.(*Lane)
				defer l.Close()
				m, err := l.HarvestTriton(ctx, picked, HarvestOptions{Wall: *wall, Stderr: stderr})
				if err != nil {
					return err
				}
				if *manifest != "" {
					b, _ := json.Marshal(m)
					if err := os.WriteFile(*manifest, b, 0o644); err != nil {
						return err
					}
				}
				items, skips := TritonItems(m)
				for _, it := range items {
					if err := WriteTritonItem(*out, it); err != nil {
						return err
					}
				}
				SortSkips(skips)
				for _, s := range skips {
					fmt.Fprintf(stderr, "skipped %s\n", s)
				}
				fmt.Fprintf(stdout, "%d Triton kernel item(s) from %d problem(s) written to %s (torch %s, triton %s, %s); %d skipped (%s)\n",
					len(items), len(picked), *out, m.Torch, m.Triton, m.Device, len(skips), skipSummary(skips))
				return nil
			}
		}}
}
