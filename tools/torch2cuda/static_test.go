package torch2cuda

import (
	"context"
	"strings"
	"testing"
)

// cudaSrc is a CUDA source as answers hold it: a string with a kernel.
const cudaSrc = "CUDA_SRC = r\"\"\"\n#include <torch/extension.h>\n__global__ void scale_kernel(const float* x, float* y, int n) {\n" +
	"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = 2.f * x[i];\n}\n" +
	"torch::Tensor scale(torch::Tensor x) {\n    auto y = torch::empty_like(x);\n" +
	"    scale_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());\n    return y;\n}\n\"\"\"\n" +
	"CPP_SRC = \"torch::Tensor scale(torch::Tensor x);\"\n"

const modelNew = "\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return ext.scale(x)\n"

const inlineArgs = `name="scale_ext", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions=["scale"]`

// TestStaticBuildCalls: the syntax-tree check (static_check.py in the
// sandbox) accepts the ordinary Python forms of building an extension,
// whatever the names, and rejects modules that build none, or no
// __global__ kernel.
func TestStaticBuildCalls(t *testing.T) {
	t.Parallel()
	l := newLane(t, "")
	accept := []struct{ name, src string }{
		{"from import", "import torch\nfrom torch.utils.cpp_extension import load_inline\n" + cudaSrc + "ext = load_inline(" + inlineArgs + ")\n"},
		{"from import as build (issue 21)", "import torch\nfrom torch.utils.cpp_extension import load_inline as build\n" + cudaSrc + "ext = build(" + inlineArgs + ")\n"},
		{"module alias", "import torch\nimport torch.utils.cpp_extension as ce\n" + cudaSrc + "ext = ce.load_inline(" + inlineArgs + ")\n"},
		{"from torch.utils import cpp_extension; load(sources=)", "import os, torch\nfrom torch.utils import cpp_extension\n" + cudaSrc +
			"p = os.path.join(os.getcwd(), 'k.cu')\nopen(p, 'w').write(CUDA_SRC)\next = cpp_extension.load(name='k', sources=[p])\n"},
		{"cpp_extension aliased", "import torch\nfrom torch.utils import cpp_extension as cx\n" + cudaSrc + "ext = cx.load_inline(" + inlineArgs + ")\n"},
		{"full path after import torch (KernelBench few-shot)", "import torch\nimport torch.nn as nn\n" + cudaSrc +
			"ext = torch.utils.cpp_extension.load_inline(" + inlineArgs + ", verbose=True, extra_cflags=[\"\"], extra_ldflags=[\"\"])\n"},
		{"full path, torch aliased", "import torch as th\n" + cudaSrc + "ext = th.utils.cpp_extension.load_inline(" + inlineArgs + ")\ntorch = th\n"},
		{"import torch.utils.cpp_extension", "import torch.utils.cpp_extension\n" + cudaSrc + "ext = torch.utils.cpp_extension.load_inline(" + inlineArgs + ")\n"},
		{"star import", "import torch\nfrom torch.utils.cpp_extension import *\n" + cudaSrc + "ext = load_inline(" + inlineArgs + ")\n"},
		{"load from import", "import torch\nfrom torch.utils.cpp_extension import load\n" + cudaSrc +
			"with open('k.cu', 'w') as f:\n    f.write(CUDA_SRC)\next = load(name='k', sources=['k.cu'], extra_cuda_cflags=['-O3'])\n"},
		{"parenthesised multi-line import", "import torch\nfrom torch.utils.cpp_extension import (\n    load,\n    load_inline,\n)\n" + cudaSrc +
			"ext = load_inline(\n    " + inlineArgs + ",\n)\n"},
		{"assigned alias", "import torch\nfrom torch.utils.cpp_extension import load_inline\n_build = load_inline\n" + cudaSrc + "ext = _build(" + inlineArgs + ")\n"},
		{"alias chain", "import torch\nimport torch.utils.cpp_extension as ce\nb1 = ce.load_inline\nb2 = b1\n" + cudaSrc + "ext = b2(" + inlineArgs + ")\n"},
		{"functools.partial", "import functools, torch\nfrom torch.utils.cpp_extension import load_inline\n" + cudaSrc +
			"build = functools.partial(load_inline, verbose=False)\next = build(" + inlineArgs + ")\n"},
		{"partial imported", "import torch\nfrom functools import partial\nfrom torch.utils import cpp_extension\n" + cudaSrc +
			"build = partial(cpp_extension.load_inline, extra_cuda_cflags=['-O3'])\next = build(" + inlineArgs + ")\n"},
		{"built lazily in __init__", "import torch\nfrom torch.utils.cpp_extension import load_inline\n" + cudaSrc +
			"class ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.ext = load_inline(" + inlineArgs + ")\n" +
			"    def forward(self, x):\n        return self.ext.scale(x)\n"},
		{"builder function", "import torch\nimport torch.utils.cpp_extension as cpp\n" + cudaSrc +
			"def _compile():\n    return cpp.load_inline(" + inlineArgs + ")\next = _compile()\n"},
		{"inside try/except", "import torch\ntry:\n    from torch.utils.cpp_extension import load_inline as _li\nexcept ImportError:\n    _li = None\n" +
			cudaSrc + "ext = _li(" + inlineArgs + ")\n"},
		{"getattr", "import torch\nfrom torch.utils import cpp_extension\n" + cudaSrc + "ext = getattr(cpp_extension, 'load_inline')(" + inlineArgs + ")\n"},
		{"importlib", "import importlib, torch\n" + cudaSrc + "ext = importlib.import_module('torch.utils.cpp_extension').load_inline(" + inlineArgs + ")\n"},
		{"attribute assigned", "import torch\nfrom torch.utils.cpp_extension import load_inline\n" + cudaSrc +
			"class Builder:\n    def __init__(self):\n        self.fn = load_inline\n    def go(self):\n        return self.fn(" + inlineArgs + ")\next = Builder().go()\n"},
		{"class attribute staticmethod", "import torch\nfrom torch.utils.cpp_extension import load_inline\n" + cudaSrc +
			"class ModelNew(torch.nn.Module):\n    _build = staticmethod(load_inline)\n    def __init__(self):\n        super().__init__()\n" +
			"        self.ext = self._build(" + inlineArgs + ")\n"},
		{"tuple assignment", "import torch\nfrom torch.utils.cpp_extension import load_inline\nbuild, n = load_inline, 3\n" + cudaSrc + "ext = build(" + inlineArgs + ")\n"},
		{"walrus", "import torch\nimport torch.utils.cpp_extension as ce\n" + cudaSrc + "if (b := ce.load_inline):\n    ext = b(" + inlineArgs + ")\n"},
		{"f-string source", "import torch\nfrom torch.utils.cpp_extension import load_inline\nBLOCK = 256\n" +
			"src = f\"\"\"__global__ void k(float* x) {{ x[threadIdx.x] *= {BLOCK}; }}\"\"\"\n" +
			"ext = load_inline(name='k', cpp_sources='', cuda_sources=src)\n"},
		{"kernel source assembled from parts", "import torch\nfrom torch.utils.cpp_extension import load_inline\nHEAD = '#include <cuda_runtime.h>\\n'\n" +
			"KERNEL = '__global__ void k(float* x) { x[0] = 1.f; }'\nsrc = HEAD + KERNEL\next = load_inline(name='k', cpp_sources='', cuda_sources=[src])\n"},
		{"annotated assignment", "import torch\nfrom typing import Callable\nfrom torch.utils.cpp_extension import load_inline\nbuild: Callable = load_inline\n" +
			cudaSrc + "ext = build(" + inlineArgs + ")\n"},
	}
	reject := []struct{ name, src, why string }{
		{"pure torch", "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return 2 * x\n", "builds no extension"},
		{"imports load_inline, never calls it", "import torch\nfrom torch.utils.cpp_extension import load_inline\n" + cudaSrc +
			"class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return 2 * x\n", "never calls a builder"},
		{"load_inline in a comment and a string only", "import torch\n# ext = load_inline(name='k', cuda_sources=CUDA_SRC)\n" + cudaSrc +
			"NOTE = \"torch.utils.cpp_extension.load_inline(...) would build it\"\n", "builds no extension"},
		{"a function of its own named load_inline", "import torch\n" + cudaSrc + "def load_inline(**kw):\n    return None\next = load_inline(" + inlineArgs + ")\n",
			"builds no extension"},
		{"another module's load_inline", "import torch\nimport mylib\n" + cudaSrc + "ext = mylib.load_inline(" + inlineArgs + ")\n", "builds no extension"},
		{"setuptools extension objects", "import torch\nfrom torch.utils.cpp_extension import CUDAExtension, BuildExtension\n" + cudaSrc +
			"e = CUDAExtension('k', ['k.cu'])\n", "never calls a builder"},
		{"triton", "import torch\nimport triton\nimport triton.language as tl\n@triton.jit\ndef k(x_ptr):\n    pass\n", "builds no extension"},
		{"C++ only extension", "import torch\nfrom torch.utils.cpp_extension import load_inline\n" +
			"ext = load_inline(name='k', cpp_sources='torch::Tensor f(torch::Tensor x) { return x * 2; }', functions=['f'])\n", "defines no __global__"},
		{"__global__ only in a comment", "import torch\nfrom torch.utils.cpp_extension import load_inline\n# __global__ void k(float*)\n" +
			"ext = load_inline(name='k', cpp_sources='torch::Tensor f(torch::Tensor x) { return x * 2; }', functions=['f'])\n", "only outside string literals"},
		{"cuBLAS only (KernelBench adversarial style)", "import torch\nfrom torch.utils.cpp_extension import load_inline\n" +
			"SRC = '#include <cublas_v2.h>\\ntorch::Tensor mm(torch::Tensor a, torch::Tensor b) { cublasHandle_t h; cublasCreate(&h); return a; }'\n" +
			"ext = load_inline(name='k', cpp_sources='torch::Tensor mm(torch::Tensor a, torch::Tensor b);', cuda_sources=SRC, functions=['mm'])\n",
			"defines no __global__"},
	}
	ctx := context.Background()
	for _, tc := range accept {
		t.Run("accept/"+tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := l.staticCheck(ctx, tc.src+modelNew)
			if err != nil {
				t.Fatal(err)
			}
			if f.SyntaxError != nil {
				t.Fatalf("syntax error: %s", *f.SyntaxError)
			}
			if why := f.suspicion(true); why != "" || len(f.Builds) == 0 {
				t.Errorf("rejected: %s (facts %+v)", why, f)
			}
		})
	}
	for _, tc := range reject {
		t.Run("reject/"+tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := l.staticCheck(ctx, tc.src+modelNew)
			if err != nil {
				t.Fatal(err)
			}
			if f.SyntaxError != nil {
				t.Fatalf("syntax error: %s", *f.SyntaxError)
			}
			if why := f.suspicion(true); !strings.Contains(why, tc.why) {
				t.Errorf("suspicion %q, want it to say %q (facts %+v)", why, tc.why, f)
			}
		})
	}
}

// TestStaticFactsDetail: what the static stage reports, and the CPU
// device's rule (a C++ extension is enough).
func TestStaticFactsDetail(t *testing.T) {
	t.Parallel()
	l := newLane(t, "")
	src := "import torch\nfrom torch.utils.cpp_extension import load_inline as build\n" + cudaSrc + "ext = build(" + inlineArgs + ")\n" + modelNew
	f, err := l.staticCheck(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if d := f.detail(); !strings.Contains(d, "load_inline (line ") || !strings.Contains(d, "as build") {
		t.Errorf("detail %q", d)
	}
	cpp := "import torch\nfrom torch.utils import cpp_extension\next = cpp_extension.load_inline(name='k', cpp_sources='int f() { return 1; }', functions=['f'])\n" + modelNew
	if f, err = l.staticCheck(context.Background(), cpp); err != nil {
		t.Fatal(err)
	}
	if f.suspicion(false) != "" || !strings.Contains(f.suspicion(true), "__global__") {
		t.Errorf("C++ extension: cpu %q, cuda %q", f.suspicion(false), f.suspicion(true))
	}
	bad := "import torch\nclass ModelNew(torch.nn.Module)\n    pass\n"
	if f, err = l.staticCheck(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	if f.SyntaxError == nil || !strings.Contains(*f.SyntaxError, "candidate.py:2:") {
		t.Errorf("syntax error: %v", f.SyntaxError)
	}
	for _, odd := range []string{"x = 1\x00\n", "\xff\xfe not utf-8 = 1\n", strings.Repeat("(", 300) + strings.Repeat(")", 300) + "\n"} {
		if f, err = l.staticCheck(context.Background(), odd); err != nil {
			t.Errorf("%.20q: %v", odd, err)
		} else if f.SyntaxError == nil {
			t.Errorf("%.20q: no syntax error", odd)
		}
	}
}

// TestStaticSuspicionFallback: the refinement taxonomy's Go check (no
// sandbox) flags only what cannot build a kernel in any form.
func TestStaticSuspicionFallback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"alias (issue 21)", "from torch.utils.cpp_extension import load_inline as build\n" + cudaSrc + "ext = build(" + inlineArgs + ")\n", ""},
		{"module alias", "import torch.utils.cpp_extension as ce\n" + cudaSrc + "ext = ce.load(name='k', sources=['k.cu'])\n", ""},
		{"pure torch", "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x, y):\n        return torch.add(x, y)\n",
			"builds no extension (torch.utils.cpp_extension is never named); defines no __global__ CUDA kernel"},
		{"no kernel", "from torch.utils.cpp_extension import load_inline\next = load_inline(name='k', cpp_sources='int f();')\n", "defines no __global__ CUDA kernel"},
	} {
		if got := staticSuspicion(tc.src); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
