package ptx2cuda

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Roles of pointer parameters.
const (
	RoleIn    = "in"
	RoleOut   = "out"
	RoleInOut = "inout"
)

// HarnessSpec is a task's harness, every expression resolved: what the
// generated main allocates, fills, launches, reads back and times. It is
// stored in the task's files as harness.json.
type HarnessSpec struct {
	// Kernel is the __global__ function's name.
	Kernel string         `json:"kernel"`
	Params []HarnessParam `json:"params"`
	Grid   [3]int64       `json:"grid"`
	Block  [3]int64       `json:"block"`
	// Shared is the launch's dynamic shared memory in bytes.
	Shared int64 `json:"shared"`
	// Flags are the variant's nvcc flags: the PTX was made with them, and
	// the reference and the answer are built with them.
	Flags []string `json:"flags,omitempty"`
	// Seed seeds the input generator (the same for every variant of an
	// item).
	Seed uint64 `json:"seed"`
	// Reference is "" when the reference is the task's kernel.cu, or
	// ReferencePTX when it is the task's PTX (a Triton kernel's), loaded
	// through the driver API; ExtraParams is then the number of null
	// pointers its launch passes after the parameters.
	Reference   string `json:"reference,omitempty"`
	ExtraParams int    `json:"extra_params,omitempty"`
}

// HarnessParam is one resolved parameter.
type HarnessParam struct {
	Name string `json:"name"`
	// Type is the C type ("const float*", "int").
	Type string `json:"type"`
	// Elem is the element (or scalar) type ("float", "unsigned int").
	Elem    string `json:"elem"`
	Pointer bool   `json:"pointer,omitempty"`
	Const   bool   `json:"const,omitempty"`
	// Role, Count and Init are a pointer's; Init is canonical
	// (uniform(-1,1), int(0,255), const(0), iota, iota(7), perm).
	Role  string `json:"role,omitempty"`
	Count int64  `json:"count,omitempty"`
	Init  string `json:"init,omitempty"`
	// Value is a scalar's value as a C literal ("1048576", "2.5f").
	Value string `json:"value,omitempty"`
}

func (p HarnessParam) elem() elemType { return elemTypes[p.Elem] }

// isOutput reports whether the harness reads the buffer back.
func (p HarnessParam) isOutput() bool { return p.Pointer && p.Role != RoleIn }

func (h HarnessSpec) hasOutput() bool {
	for _, p := range h.Params {
		if p.isOutput() {
			return true
		}
	}
	return false
}

// Outputs are the buffers compared, in parameter order.
func (h HarnessSpec) Outputs() []HarnessParam {
	var out []HarnessParam
	for _, p := range h.Params {
		if p.isOutput() {
			out = append(out, p)
		}
	}
	return out
}

// Signature is the kernel's C++ declaration as the harness calls it.
func (h HarnessSpec) Signature() string {
	var ps []string
	for _, p := range h.Params {
		ps = append(ps, p.Type+" "+p.Name)
	}
	return "__global__ void " + h.Kernel + "(" + strings.Join(ps, ", ") + ")"
}

// pointerType is the function pointer type the harness assigns the
// kernel to: a kernel with other parameter types does not compile.
func (h HarnessSpec) pointerType(name string) string {
	var ps []string
	for _, p := range h.Params {
		ps = append(ps, p.Type)
	}
	return "void (*" + name + ")(" + strings.Join(ps, ", ") + ")"
}

// ParseHarness reads a harness.json.
func ParseHarness(b []byte) (HarnessSpec, error) {
	var h HarnessSpec
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("%s: %w", FileHarness, err)
	}
	if !identRE.MatchString(h.Kernel) || !h.hasOutput() {
		return h, fmt.Errorf("%s: no kernel name or no output buffer", FileHarness)
	}
	for _, p := range h.Params {
		if _, ok := elemTypes[p.Elem]; !ok || !identRE.MatchString(p.Name) {
			return h, fmt.Errorf("%s: parameter %q of element type %q", FileHarness, p.Name, p.Elem)
		}
		if p.Pointer && (p.Count < 1 || p.Count > maxElements || !canonicalInitRE.MatchString(p.Init)) {
			return h, fmt.Errorf("%s: parameter %s: count %d, init %q", FileHarness, p.Name, p.Count, p.Init)
		}
		if !p.Pointer && !literalRE.MatchString(p.Value) {
			return h, fmt.Errorf("%s: parameter %s: value %q is not a literal", FileHarness, p.Name, p.Value)
		}
	}
	if err := FlagsOK(h.Flags); err != nil {
		return h, fmt.Errorf("%s: flags: %w", FileHarness, err)
	}
	if (h.Reference != "" && h.Reference != ReferencePTX) || h.ExtraParams < 0 || h.ExtraParams > maxExtraParams {
		return h, fmt.Errorf("%s: reference %q with %d extra parameters", FileHarness, h.Reference, h.ExtraParams)
	}
	return h, nil
}

var (
	canonicalInitRE = regexp.MustCompile(`^(uniform\([-+0-9.e]+,[-+0-9.e]+\)|int\(-?[0-9]+,-?[0-9]+\)|const\([-+0-9.e]+\)|iota|iota\([0-9]+\)|perm)$`)
	literalRE       = regexp.MustCompile(`^-?[0-9][0-9.e+-]*(f|u|ll|ull)?$`)
)

// elemType is an element type the harness can fill and compare.
type elemType struct {
	c        string // C name
	size     int    // bytes of one lane
	lanes    int    // vector lanes (float4: 4)
	float    bool
	signed   bool
	min, max int64  // range of a scalar value
	suffix   string // of an integer literal
	lane     string // the C type of one lane
}

var elemTypes = func() map[string]elemType {
	m := map[string]elemType{
		"float":              {c: "float", size: 4, lanes: 1, float: true, lane: "float"},
		"double":             {c: "double", size: 8, lanes: 1, float: true, lane: "double"},
		"int":                {c: "int", size: 4, lanes: 1, signed: true, min: math.MinInt32, max: math.MaxInt32, lane: "int"},
		"unsigned int":       {c: "unsigned int", size: 4, lanes: 1, max: math.MaxUint32, suffix: "u", lane: "unsigned int"},
		"long long":          {c: "long long", size: 8, lanes: 1, signed: true, min: math.MinInt64, max: math.MaxInt64, suffix: "ll", lane: "long long"},
		"unsigned long long": {c: "unsigned long long", size: 8, lanes: 1, max: math.MaxInt64, suffix: "ull", lane: "unsigned long long"},
		"unsigned char":      {c: "unsigned char", size: 1, lanes: 1, max: 255, lane: "unsigned char"},
		"float2":             {c: "float2", size: 4, lanes: 2, float: true, lane: "float"},
		"float4":             {c: "float4", size: 4, lanes: 4, float: true, lane: "float"},
		"int2":               {c: "int2", size: 4, lanes: 2, signed: true, lane: "int"},
		"int4":               {c: "int4", size: 4, lanes: 4, signed: true, lane: "int"},
	}
	m["unsigned"] = m["unsigned int"]
	m["size_t"] = elemType{c: "size_t", size: 8, lanes: 1, max: math.MaxInt64, suffix: "ull", lane: "size_t"}
	return m
}()

// ElemTypes lists the element types a parameter may have.
func ElemTypes() []string {
	var out []string
	for k := range elemTypes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Names the generated harness uses.
const (
	harnessFile = "harness.cu"
	kernelInBox = "kernel.cu" // the reference or the answer: same name, so a right answer shares the reference's build
	outputFile  = "out.bin"
)

// DefaultReps is how many launches a timed batch of the harness makes.
const DefaultReps = 20

// timingBatches is how many timed batches the harness makes; it reports
// the fastest batch's mean (kernels of a few microseconds time noisily).
const timingBatches = 5

// GenerateHarness writes the harness main for h: it includes kernel.cu,
// assigns the kernel to a function pointer of the recorded signature (so
// an answer with other parameter types does not compile), allocates each
// buffer, fills inputs from a fixed LCG seeded per item, launches once with
// the recorded configuration, checks for CUDA errors (exit 1), writes every
// out and inout buffer as raw little-endian bytes to the file named by
// argv[1] (default out.bin) in parameter order, prints
// "kiln_input_modified NAME" for each input the launch changed, then
// restores the inout buffers, makes 3 warm-up launches and times 5
// batches of reps launches with CUDA events, and prints
// "kiln_kernel_ms MEAN reps N batches 5": the fastest batch's mean time
// per launch. The buffers stay in L2 between launches (no flush), for the
// reference and the answer alike.
func GenerateHarness(h HarnessSpec, reps int) string { return generateHarness(h, reps, false) }

// generateHarness is GenerateHarness; with launcher, kernel.cu is a PTX
// reference's launcher (PTXLauncher), which the harness calls as
// kiln_launch(grid, block, shared, arguments...) in place of <<<>>>.
func generateHarness(h HarnessSpec, reps int, launcher bool) string {
	if reps < 1 {
		reps = DefaultReps
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	harnessPrelude(w, h)
	if !launcher {
		w("    %s = %s;\n", h.pointerType("kiln_kernel"), h.Kernel)
	}
	args := harnessBuffers(w, h)
	launch := harnessLaunch(w, h, args, launcher)
	harnessOutputs(w, h)
	harnessTiming(w, h, launch, reps)
	return b.String()
}

// harnessPrelude writes the harness's includes, its helpers (random
// numbers, error checks, allocation) and the start of main.
func harnessPrelude(w func(string, ...any), h HarnessSpec) {
	w("// kiln ptx2cuda harness for %s (generated)\n", h.Kernel)
	w("#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <cuda_runtime.h>\n")
	w("#include \"%s\"\n\n", kernelInBox)
	w(`static unsigned long long kiln_rng;
static unsigned int kiln_next(void)
{
    kiln_rng = kiln_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned int)(kiln_rng >> 32);
}
static double kiln_unit(void) { return kiln_next() * (1.0 / 4294967296.0); }
static void kiln_check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "kiln harness: %%s: %%s (%%s)\n", what, cudaGetErrorString(e), cudaGetErrorName(e));
        exit(1);
    }
}
static void *kiln_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "kiln harness: host allocation of %%zu bytes failed\n", n);
        exit(2);
    }
    return p;
}

int main(int argc, char **argv)
{
    const char *kiln_out = argc > 1 ? argv[1] : "%s";
`, outputFile)
}

// harnessBuffers writes the set-up of each pointer parameter's buffers,
// filled on the host and copied to the device, and returns the kernel's
// arguments.
func harnessBuffers(w func(string, ...any), h HarnessSpec) []string {
	var args []string
	for i, p := range h.Params {
		if !p.Pointer {
			args = append(args, "("+p.Elem+")"+p.Value)
			continue
		}
		et := p.elem()
		lanes := int64(et.lanes)
		w("    // %s: %s, %s, %d elements, %s\n", p.Name, p.Type, p.Role, p.Count, p.Init)
		w("    const size_t kiln_n%d = %dULL, kiln_b%d = kiln_n%d * sizeof(%s);\n", i, p.Count*lanes, i, i, et.lane)
		w("    %s *kiln_h%d = (%s *)kiln_alloc(kiln_b%d);\n", et.lane, i, et.lane, i)
		w("    kiln_rng = %dULL;\n", h.Seed^(uint64(i+1)*0x9e3779b97f4a7c15))
		w("    %s\n", fillCode(i, et, p.Init, lanes))
		w("    %s *kiln_d%d = 0;\n", et.lane, i)
		w("    kiln_check(cudaMalloc((void **)&kiln_d%d, kiln_b%d), \"cudaMalloc %s\");\n", i, i, p.Name)
		w("    kiln_check(cudaMemcpy(kiln_d%d, kiln_h%d, kiln_b%d, cudaMemcpyHostToDevice), \"copy %s to the device\");\n", i, i, i, p.Name)
		args = append(args, "("+p.Type+")kiln_d"+strconv.Itoa(i))
	}
	return args
}

// harnessLaunch writes the launch configuration and the checked launch,
// and returns the launch statement.
func harnessLaunch(w func(string, ...any), h HarnessSpec, args []string, launcher bool) string {
	w("    const dim3 kiln_grid(%d, %d, %d), kiln_block(%d, %d, %d);\n", h.Grid[0], h.Grid[1], h.Grid[2], h.Block[0], h.Block[1], h.Block[2])
	w("    const size_t kiln_shared = %d;\n", h.Shared)
	launch := "kiln_kernel<<<kiln_grid, kiln_block, kiln_shared>>>(" + strings.Join(args, ", ") + ");"
	if launcher {
		launch = "kiln_launch(kiln_grid, kiln_block, kiln_shared" + prefixComma(strings.Join(args, ", ")) + ");"
	} else {
		w("    if (kiln_shared > 48 * 1024)\n")
		w("        kiln_check(cudaFuncSetAttribute((const void *)kiln_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kiln_shared), \"dynamic shared memory attribute\");\n")
	}
	w("    %s\n", launch)
	w("    kiln_check(cudaGetLastError(), \"kernel launch\");\n")
	w("    kiln_check(cudaDeviceSynchronize(), \"kernel run\");\n")
	return launch
}

// harnessOutputs writes the outputs into the output file and reports the
// inputs the kernel modified.
func harnessOutputs(w func(string, ...any), h HarnessSpec) {
	w("    FILE *kiln_f = fopen(kiln_out, \"wb\");\n")
	w("    if (!kiln_f) {\n        perror(kiln_out);\n        return 2;\n    }\n")
	for i, p := range h.Params {
		if !p.Pointer {
			continue
		}
		et := p.elem()
		if p.isOutput() {
			w("    {\n        %s *o = (%s *)kiln_alloc(kiln_b%d);\n", et.lane, et.lane, i)
			w("        kiln_check(cudaMemcpy(o, kiln_d%d, kiln_b%d, cudaMemcpyDeviceToHost), \"copy %s back\");\n", i, i, p.Name)
			w("        if (fwrite(o, 1, kiln_b%d, kiln_f) != kiln_b%d) {\n            perror(kiln_out);\n            return 2;\n        }\n", i, i)
			w("        free(o);\n    }\n")
		} else {
			w("    {\n        %s *o = (%s *)kiln_alloc(kiln_b%d);\n", et.lane, et.lane, i)
			w("        kiln_check(cudaMemcpy(o, kiln_d%d, kiln_b%d, cudaMemcpyDeviceToHost), \"copy %s back\");\n", i, i, p.Name)
			w("        if (memcmp(o, kiln_h%d, kiln_b%d) != 0)\n            printf(\"kiln_input_modified %s\\n\");\n", i, i, p.Name)
			w("        free(o);\n    }\n")
		}
	}
	w("    if (fclose(kiln_f) != 0) {\n        perror(kiln_out);\n        return 2;\n    }\n")
}

// harnessTiming writes the timed launches: the inputs restored, a warm-up,
// then the best of timingBatches batches of reps launches.
func harnessTiming(w func(string, ...any), h HarnessSpec, launch string, reps int) {
	// Timing: inputs restored first, so the warm-up starts from the
	// checked launch's inputs.
	for i, p := range h.Params {
		if p.Pointer && p.Role == RoleInOut {
			w("    kiln_check(cudaMemcpy(kiln_d%d, kiln_h%d, kiln_b%d, cudaMemcpyHostToDevice), \"restore %s\");\n", i, i, i, p.Name)
		}
	}
	w("    for (int r = 0; r < 3; r++)\n        %s\n", launch)
	w("    kiln_check(cudaDeviceSynchronize(), \"warm-up launches\");\n")
	w("    cudaEvent_t kiln_e0, kiln_e1;\n")
	w("    kiln_check(cudaEventCreate(&kiln_e0), \"event\");\n    kiln_check(cudaEventCreate(&kiln_e1), \"event\");\n")
	w("    float kiln_best = -1;\n")
	w("    for (int b = 0; b < %d; b++) {\n", timingBatches)
	w("        kiln_check(cudaEventRecord(kiln_e0), \"event record\");\n")
	w("        for (int r = 0; r < %d; r++)\n            %s\n", reps, launch)
	w("        kiln_check(cudaEventRecord(kiln_e1), \"event record\");\n")
	w("        kiln_check(cudaEventSynchronize(kiln_e1), \"timed launches\");\n")
	w("        kiln_check(cudaGetLastError(), \"timed launches\");\n")
	w("        float ms = 0;\n        kiln_check(cudaEventElapsedTime(&ms, kiln_e0, kiln_e1), \"elapsed time\");\n")
	w("        if (kiln_best < 0 || ms < kiln_best)\n            kiln_best = ms;\n    }\n")
	w("    printf(\"kiln_kernel_ms %%.6f reps %d batches %d\\n\", kiln_best / %d);\n", reps, timingBatches, reps)
	w("    return 0;\n}\n")
}

// fillCode is the C statement that fills host buffer i.
func fillCode(i int, et elemType, init string, lanes int64) string {
	h, n := fmt.Sprintf("kiln_h%d", i), fmt.Sprintf("kiln_n%d", i)
	kind, argText, _ := strings.Cut(strings.TrimSuffix(init, ")"), "(")
	args := strings.Split(argText, ",")
	switch kind {
	case "uniform":
		return fmt.Sprintf("for (size_t i = 0; i < %s; i++) %s[i] = (%s)(%s + (%s - (%s)) * kiln_unit());", n, h, et.lane, args[0], args[1], args[0])
	case "int":
		return fmt.Sprintf("for (size_t i = 0; i < %s; i++) %s[i] = (%s)(%sLL + (long long)(((unsigned long long)kiln_next() << 32 | kiln_next()) %% %dULL));",
			n, h, et.lane, args[0], mustAtoi(args[1])-mustAtoi(args[0])+1)
	case "const":
		return fmt.Sprintf("for (size_t i = 0; i < %s; i++) %s[i] = (%s)(%s);", n, h, et.lane, args[0])
	case "iota":
		if argText == "" {
			return fmt.Sprintf("for (size_t i = 0; i < %s; i++) %s[i] = (%s)(i / %d);", n, h, et.lane, lanes)
		}
		return fmt.Sprintf("for (size_t i = 0; i < %s; i++) %s[i] = (%s)((i / %d) %% %sULL);", n, h, et.lane, lanes, args[0])
	case "perm":
		return fmt.Sprintf("for (size_t i = 0; i < %s; i++) %s[i] = (%s)i;\n"+
			"    for (size_t i = %s - 1; i > 0; i--) { size_t j = kiln_next() %% (i + 1); %s t = %s[i]; %s[i] = %s[j]; %s[j] = t; }",
			n, h, et.lane, n, et.lane, h, h, h, h)
	}
	return "#error unknown init " + init
}

func mustAtoi(s string) int64 {
	v, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return v
}

// TensorDiff is the comparison of one output buffer.
type TensorDiff struct {
	Name string
	// NAE is the normalised absolute error (see CompareOutputs).
	NAE float64
	// MaxAbs is the largest |answer - reference|; At its first element.
	MaxAbs float64
	At     int64
	// Mismatches counts elements that differ at all.
	Mismatches int64
	// Exact: an integer buffer, which must match exactly.
	Exact bool
}

// OK reports whether the buffer passes with threshold.
func (d TensorDiff) OK(threshold float64) bool {
	if d.Exact {
		return d.Mismatches == 0
	}
	return d.NAE <= threshold
}

// ErrOutputSize means an output file does not hold the expected bytes.
var ErrOutputSize = errors.New("output size")

// CompareOutputs compares the answer's output file with the reference's,
// buffer by buffer (h.Outputs(), raw little-endian, parameter order).
//
// The normalised absolute error of a buffer pair (PtxDec's I/O check) is
//
//	NAE = max_i |a_i - r_i| / max(max_i |r_i|, 1e-6)
//
// over its elements (vector lanes counted as elements), r the reference,
// a the answer, both widened to float64; non-finite reference values do
// not count in max |r_i|. An element where both are NaN, or both the same
// infinity, differs by 0; where only one is, the NAE is +Inf. A floating
// buffer passes when NAE <= the threshold (1e-3, the seed's); an integer
// buffer must match exactly (its NAE is reported all the same).
func CompareOutputs(h HarnessSpec, ref, ans []byte) ([]TensorDiff, error) {
	want := int64(0)
	for _, p := range h.Outputs() {
		want += p.Count * int64(p.elem().size*p.elem().lanes)
	}
	if int64(len(ref)) != want {
		return nil, fmt.Errorf("%w: the reference wrote %d bytes, want %d", ErrOutputSize, len(ref), want)
	}
	if int64(len(ans)) != want {
		return nil, fmt.Errorf("%w: the answer wrote %d bytes, want %d", ErrOutputSize, len(ans), want)
	}
	var out []TensorDiff
	off := int64(0)
	for _, p := range h.Outputs() {
		et := p.elem()
		n := p.Count * int64(et.lanes)
		size := int64(et.size)
		d := TensorDiff{Name: p.Name, Exact: !et.float, At: -1}
		scale := 0.0
		for i := int64(0); i < n; i++ {
			r := readElem(et, ref[off+i*size:])
			if !math.IsInf(r, 0) && !math.IsNaN(r) {
				scale = max(scale, math.Abs(r))
			}
		}
		for i := int64(0); i < n; i++ {
			rb, ab := ref[off+i*size:off+(i+1)*size], ans[off+i*size:off+(i+1)*size]
			if bytes.Equal(rb, ab) {
				continue
			}
			r, a := readElem(et, rb), readElem(et, ab)
			var diff float64
			switch {
			case et.float && (r == a || math.IsNaN(r) && math.IsNaN(a)):
				continue // -0 and 0, or two NaNs
			case math.IsNaN(r) || math.IsNaN(a) || math.IsInf(r, 0) || math.IsInf(a, 0):
				diff = math.Inf(1)
			default:
				diff = math.Abs(a - r)
			}
			d.Mismatches++
			if d.At < 0 || diff > d.MaxAbs {
				d.MaxAbs, d.At = diff, i
			}
		}
		if d.Mismatches > 0 {
			d.NAE = d.MaxAbs / max(scale, 1e-6)
		}
		out = append(out, d)
		off += n * size
	}
	return out, nil
}

// readElem reads one lane as float64.
func readElem(et elemType, b []byte) float64 {
	switch {
	case et.float && et.size == 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case et.float:
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case et.size == 1:
		return float64(b[0])
	case et.size == 4 && et.signed:
		return float64(int32(binary.LittleEndian.Uint32(b)))
	case et.size == 4:
		return float64(binary.LittleEndian.Uint32(b))
	case et.signed:
		return float64(int64(binary.LittleEndian.Uint64(b)))
	}
	return float64(binary.LittleEndian.Uint64(b))
}
