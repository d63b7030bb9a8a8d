package refinement

import (
	"regexp"
	"strings"
)

// Shared pieces of the feature patterns.
const (
	// floatLitPattern matches C floating literals: 1.5, 1., .5, 1e-3, 2.0f,
	// 0x1.8p3, not member accesses or integers.
	floatLitPattern = `(?:^|[^\w.])(?:(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][-+]?\d+)[fFlL]?`
	mathFuncs       = `sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|exp|exp2|expm1|log|log2|log10|log1p|pow|sqrt|cbrt|hypot|floor|ceil|round|trunc|fabs|fmod|remainder|fmin|fmax|fdim|fma|lround|llround|lrint|rint|nearbyint|copysign|ldexp|frexp|modf|erf|erfc|tgamma|lgamma|scalbn|ilogb|logb|nextafter`
)

// cFeatureRules are the c2x86 features, named like the corpus categories
// where they coincide (loop, switch_few, switch_many, float_const, struct,
// recursion, array_pointer, string, bitops, math_call).
func cFeatureRules() []FeatureRule {
	return []FeatureRule{
		{Name: "if", Pattern: `\bif\s*\(`, Doc: "if statements"},
		{Name: "ternary", Pattern: `\?`, Doc: "conditional expressions (a ? b : c)"},
		{Name: "loop", Pattern: `\b(?:for|while)\s*\(|\bdo\b`, Doc: "any loop"},
		{Name: "loop_for", Pattern: `\bfor\s*\(`, Doc: "for loops"},
		{Name: "loop_while", Detect: hasWhileLoop, Doc: "while loops (not the while of a do loop)"},
		{Name: "loop_do", Pattern: `\bdo\b`, Doc: "do ... while loops"},
		{Name: "goto", Pattern: `\bgoto\b`, Doc: "goto statements"},
		{Name: "switch", Pattern: `\bswitch\s*\(`, Doc: "any switch"},
		{Name: "switch_few", Detect: func(s *Source) bool { return anyCount(s.SwitchCaseCounts(), func(n int) bool { return n <= 4 }) },
			Doc: "a switch with at most 4 case labels (a compare chain even with jump tables allowed)"},
		{Name: "switch_many", Detect: func(s *Source) bool { return anyCount(s.SwitchCaseCounts(), func(n int) bool { return n >= 5 }) },
			Doc: "a switch with 5 or more case labels (a jump table unless -fno-jump-tables)"},
		{Name: "float_const", Pattern: floatLitPattern, Doc: "floating-point literals (6.0, 0.125f, 1e-3, 0x1p3)"},
		{Name: "float_type", Pattern: `\b(?:float|double)\b`, Doc: "float or double values"},
		{Name: "struct", Pattern: `\b(?:struct|union)\b|->`, Doc: "structs and unions"},
		{Name: "bitfield", Detect: hasBitfield, Doc: "struct bit-fields"},
		{Name: "recursion", Detect: func(s *Source) bool { return callGraphHasCycle(s.src.functions()) },
			Doc: "a function that calls itself, directly or through others"},
		{Name: "pointer", Pattern: `->|\b(?:char|short|int|long|float|double|void|unsigned|signed|struct\s+\w+|union\s+\w+|\w+_t)\s*\*+\s*(?:const\s+|restrict\s+)*\w|(?:[(,=]|\breturn)\s*&\s*[A-Za-z_]`,
			Doc: "pointer declarations, address-of, ->"},
		{Name: "array", Pattern: `\w\s*\[`, Doc: "array declarations or indexing"},
		{Name: "array_pointer", Pattern: `->|\w\s*\[|\b(?:char|short|int|long|float|double|void|unsigned|signed|struct\s+\w+|union\s+\w+|\w+_t)\s*\*+\s*(?:const\s+|restrict\s+)*\w`,
			Doc: "arrays or pointers (the corpus category)"},
		{Name: "function_pointer", Pattern: `\(\s*\*\s*\w*\s*\)\s*\(`, Doc: "function pointers"},
		{Name: "string", Detect: hasStrings, Doc: "string literals, char pointers or string.h/ctype.h calls"},
		{Name: "bitops", Pattern: `<<|>>|~|\^|[\w)\]]\s*&(?:[^&]|$)|(?:^|[^|])\|(?:[^|]|$)`,
			Doc: "shifts, masks and other bitwise operators"},
		{Name: "divmod", Pattern: `[\w)\]]\s*[/%]=?\s*[\w(.-]`, Doc: "division or remainder"},
		{Name: "unsigned", Pattern: `\bunsigned\b|\buint(?:8|16|32|64|ptr|max)_t\b|\bsize_t\b`, Doc: "unsigned integer types"},
		{Name: "math_call", Pattern: `\b(?:` + mathFuncs + `)[fl]?\s*\(`, Doc: "libm calls (sin, sqrt, pow, floor, ...)"},
		{Name: "variadic", Pattern: `\bva_start\b|\.\.\.\s*\)`, Doc: "variadic functions"},
		{Name: "static_data", Pattern: `\bstatic\s+(?:const\s+)?[\w\s]+\[`, Doc: "static tables"},
	}
}

// cudaFeatureRules are the cuda-synth features (the operation types of
// the CASS failure analysis, appendix A.6, and a few more).
func cudaFeatureRules() []FeatureRule {
	return []FeatureRule{
		{Name: "atomics", Pattern: `\batomic[A-Z]\w*\s*(?:<[^>]*>)?\s*\(|\bcuda::atomic|\bstd::atomic`, Doc: "atomic operations (atomicAdd, atomicCAS, ...)"},
		{Name: "syncthreads", Pattern: `\b__syncthreads(?:_count|_and|_or)?\s*\(|\.sync\s*\(\s*\)|\bthis_thread_block\b`, Doc: "block barriers (__syncthreads)"},
		{Name: "syncwarp", Pattern: `\b__syncwarp\s*\(`, Doc: "warp barriers (__syncwarp)"},
		{Name: "shared_memory", Pattern: `\b__shared__\b`, Doc: "__shared__ memory"},
		{Name: "dynamic_shared_memory", Pattern: `\bextern\s+__shared__\b`, Doc: "dynamically sized shared memory"},
		{Name: "local_array", Detect: hasLocalArray, Doc: "arrays local to a kernel or device function"},
		{Name: "global_memory", Detect: hasGlobalMemory, Doc: "kernels reading or writing global memory through pointer parameters"},
		{Name: "warp_intrinsics", Pattern: `\b__(?:shfl(?:_up|_down|_xor)?_sync|ballot_sync|any_sync|all_sync|uni_sync|activemask|match_(?:any|all)_sync|reduce_\w+_sync|popc|ffs|clz)\s*\(`,
			Doc: "warp-level intrinsics (__shfl*_sync, __ballot_sync, ...)"},
		{Name: "streams", Pattern: `\bcudaStream_t\b|\bcudaStreamCreate\w*\s*\(`, Doc: "CUDA streams"},
		{Name: "events", Pattern: `\bcudaEvent_t\b|\bcudaEventCreate\w*\s*\(|\bcudaEventRecord\s*\(`, Doc: "CUDA events"},
		{Name: "constant_memory", Pattern: `\b__constant__\b|\bcudaMemcpyToSymbol\s*\(`, Doc: "__constant__ memory"},
		{Name: "managed_memory", Pattern: `\bcudaMallocManaged\s*\(|\b__managed__\b`, Doc: "unified (managed) memory"},
		{Name: "control_flow", Detect: hasKernelControlFlow, Doc: "loops or branches inside kernels and device functions"},
		{Name: "device_function", Pattern: `\b__device__\b[^;{(]*\w\s*\(`, Doc: "__device__ helper functions"},
		{Name: "texture", Pattern: `\bcudaTextureObject_t\b|\btex[123]D\w*\s*[<(]|\bsurf[123]D\w*\s*[<(]`, Doc: "texture or surface memory"},
		{Name: "cooperative_groups", Pattern: `\bcooperative_groups\b|\bcg::`, Doc: "cooperative groups"},
		{Name: "half_precision", Pattern: `\b__half2?\b|\b__nv_bfloat162?\b|\bhalf2\b|\b__float2half\w*\s*\(`, Doc: "half or bfloat16 types"},
		{Name: "fast_math_intrinsics", Pattern: `\b__(?:expf|logf|sinf|cosf|powf|fdividef|fmaf_r[nzud]|fadd_r[nzud]|fmul_r[nzud]|saturatef)\s*\(|\brsqrtf?\s*\(`, Doc: "fast math intrinsics"},
		{Name: "double_precision", Pattern: `\bdouble\b`, Doc: "double-precision arithmetic"},
		{Name: "recursion", Detect: func(s *Source) bool { return callGraphHasCycle(s.src.functions()) }, Doc: "recursive functions"},
		{Name: "templates", Pattern: `\btemplate\s*<`, Doc: "C++ templates"},
	}
}

func anyCount(ns []int, f func(int) bool) bool {
	for _, n := range ns {
		if f(n) {
			return true
		}
	}
	return false
}

var (
	whileRE = regexp.MustCompile(`\bwhile\s*\(`)
	doRE    = regexp.MustCompile(`\bdo\b`)
)

// hasWhileLoop: more while keywords than do keywords (each do has one).
func hasWhileLoop(s *Source) bool {
	return len(whileRE.FindAllStringIndex(s.Code(), -1)) > len(doRE.FindAllStringIndex(s.Code(), -1))
}

var (
	structBodyRE = regexp.MustCompile(`\b(?:struct|union)\s*\w*\s*\{`)
	bitfieldRE   = regexp.MustCompile(`\w\s*:\s*\d+\s*[;,]`)
)

// hasBitfield: a "name : width;" member inside a struct or union body.
func hasBitfield(s *Source) bool {
	code := s.Code()
	for _, m := range structBodyRE.FindAllStringIndex(code, -1) {
		open := m[1] - 1
		end := matchClose(code, open)
		if end < 0 {
			continue
		}
		if bitfieldRE.MatchString(code[open+1 : end]) {
			return true
		}
	}
	return false
}

var (
	stringCallRE = regexp.MustCompile(`\b(?:str(?:len|nlen|cpy|ncpy|cat|ncat|cmp|ncmp|chr|rchr|str|tok|dup|spn|cspn|pbrk|casecmp)|to(?:upper|lower)|is(?:alpha|digit|space|upper|lower|alnum|punct|xdigit)|ato[il]|strto\w+)\s*\(`)
	charPtrRE    = regexp.MustCompile(`(\w+)?\s*\bchar\s*(?:const\s*)?\*`)
)

// hasStrings: string literals, (signed-agnostic) char pointers, or
// string.h/ctype.h calls. unsigned char pointers are byte buffers, and
// mem* calls work on any memory: neither counts.
func hasStrings(s *Source) bool {
	if s.StringLiterals() > 0 || stringCallRE.MatchString(s.Code()) {
		return true
	}
	for _, m := range charPtrRE.FindAllStringSubmatch(s.Code(), -1) {
		if m[1] != "unsigned" && m[1] != "signed" {
			return true
		}
	}
	return false
}

var (
	deviceQualRE   = regexp.MustCompile(`\b__(?:global|device)__\b`)
	globalQualRE   = regexp.MustCompile(`\b__global__\b`)
	localArrayRE   = regexp.MustCompile(`(?:^|[;{}\s])(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:int|float|double|char|short|long|bool|half|__half|size_t|u?int(?:8|16|32|64)_t|float[234]|int[234]|uint[234]|double2)\s+[A-Za-z_]\w*\s*\[[^\]]+\]`)
	sharedStmtRE   = regexp.MustCompile(`__shared__[^;]*$`)
	controlFlowRE  = regexp.MustCompile(`\b(?:if|for|while|switch)\s*\(|\bdo\b`)
	pointerParamRE = regexp.MustCompile(`\*`)
)

func deviceFuncs(s *Source) []cFunc {
	var out []cFunc
	for _, f := range s.src.functions() {
		if deviceQualRE.MatchString(f.Prefix) {
			out = append(out, f)
		}
	}
	return out
}

// hasLocalArray: a fixed-size array declared inside a kernel or device
// function that is not __shared__.
func hasLocalArray(s *Source) bool {
	for _, f := range deviceFuncs(s) {
		for _, m := range localArrayRE.FindAllStringIndex(f.Body, -1) {
			// Is this declaration part of a __shared__ statement?
			stmtStart := strings.LastIndexAny(f.Body[:m[0]+1], ";{}")
			if !sharedStmtRE.MatchString(f.Body[stmtStart+1 : m[1]]) {
				return true
			}
		}
	}
	return false
}

// hasGlobalMemory: a __global__ kernel with a pointer parameter.
func hasGlobalMemory(s *Source) bool {
	for _, f := range s.src.functions() {
		if globalQualRE.MatchString(f.Prefix) && pointerParamRE.MatchString(f.Params) {
			return true
		}
	}
	return false
}

// hasKernelControlFlow: loops or branches in a kernel or device function.
func hasKernelControlFlow(s *Source) bool {
	for _, f := range deviceFuncs(s) {
		if controlFlowRE.MatchString(f.Body) {
			return true
		}
	}
	return false
}
