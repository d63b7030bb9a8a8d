"""CPU tests of judge.py (Debian's python3-torch 1.13 + libtorch-dev is enough).

    cd /work/main && python3 -m unittest discover -s tools/torch2cuda/judge -p 'test_*.py'

The judge runs in subprocesses with an interpreter that has torch (this one, else
/usr/bin/python3).  All candidates share one C++ source, so one extension build (plus the
deliberately broken one) serves the whole run: the build dir is shared across tests.
"""
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
JUDGE = os.path.join(HERE, "judge.py")
DATA = os.path.join(HERE, "testdata")


try:
    import torch  # noqa: F401
    _TORCH_HERE = True
except Exception:
    _TORCH_HERE = False


def _has_torch(py):
    if py == sys.executable and _TORCH_HERE:
        return True  # this interpreter imports it: no second torch start-up to find out
    try:
        return subprocess.run([py, "-c", "import torch"], capture_output=True, timeout=120).returncode == 0
    except Exception:
        return False


PY = next((p for p in (sys.executable, "/usr/bin/python3") if p and os.path.exists(p) and _has_torch(p)), None)
try:
    import torch  # noqa: F401
    sys.path.insert(0, HERE)
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    import judge as J
except Exception:  # the unit tests of helpers need torch in this interpreter
    J = None

STATE = {}


def d(name):
    return os.path.join(DATA, name)


def run_judge(*args, env=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([PY, JUDGE] + list(args), capture_output=True, text=True, timeout=timeout, env=e,
                       cwd=STATE["tmp"])
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0 or not lines:
        raise AssertionError("judge.py %s failed (rc %d)\nstdout: %s\nstderr: %s" % (
            " ".join(args), p.returncode, p.stdout[-2000:], p.stderr[-3000:]))
    return json.loads(lines[-1])


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def setUpModule():
    if PY is None:
        raise unittest.SkipTest("no Python interpreter with torch (apt-get install python3-torch)")
    STATE["tmp"] = tempfile.mkdtemp(prefix="kiln-judge-test-")
    STATE["build"] = os.path.join(STATE["tmp"], "build")
    # Fill the cache once (also the test of the compile subcommand, uncached).
    t0 = time.time()
    r = run_judge("compile", "--candidate", d("cand_correct.py"), "--build-dir", STATE["build"], "--timeout", "600")
    STATE["first_compile"] = r
    STATE["first_compile_s"] = time.time() - t0
    STATE["build_ok"] = bool(r.get("ok"))
    if not r.get("ok"):
        STATE["build_reason"] = "torch C++ extensions cannot be built here (missing torch headers? apt-get install " \
                                "libtorch-dev): %s" % r.get("diagnostic", "")[:500]


def tearDownModule():
    if STATE.get("tmp"):
        shutil.rmtree(STATE["tmp"], ignore_errors=True)


def needs_build(test):
    def wrapper(self, *a, **k):
        if not STATE.get("build_ok"):
            self.skipTest(STATE.get("build_reason", "no extension build"))
        return test(self, *a, **k)
    wrapper.__name__ = test.__name__
    wrapper.__doc__ = test.__doc__
    return wrapper


MAIN_JOBS = [
    ("correct", "ref_relu_matmul.py", "cand_correct.py"),
    ("small_correct", "ref_small_scale.py", "cand_small_correct.py"),
    ("zeros_small", "ref_small_scale.py", "cand_zeros.py"),
    ("fallback", "ref_relu_matmul.py", "cand_fallback.py"),
    ("cache", "ref_relu_matmul.py", "cand_cache.py"),
    ("wrong_shape", "ref_relu_matmul.py", "cand_wrong_shape.py"),
    ("nan", "ref_relu_matmul.py", "cand_nan.py"),
    ("inplace", "ref_relu_matmul.py", "cand_inplace.py"),
    ("perf_counter", "ref_relu_matmul.py", "cand_perf_counter.py"),
    ("write_outside", "ref_relu_matmul.py", "cand_write_outside.py"),
    ("syntax", "ref_relu_matmul.py", "cand_syntax.py"),
    ("no_ext", "ref_relu_matmul.py", "cand_no_ext.py"),
    ("compile_error", "ref_relu_matmul.py", "cand_compile_error.py"),
]


# The ids of main_batch's bad lines: a missing candidate file, and a line that is not JSON.
MAIN_BAD_IDS = ["line%d" % (len(MAIN_JOBS) + 2), "nope"]


def main_batch():
    """One batch (2 at a time) over most fixtures, and two bad lines after them (MAIN_BAD_IDS); tests read
    their line."""
    if "main" not in STATE:
        tmp = STATE["tmp"]
        jobs = os.path.join(tmp, "main_jobs.jsonl")
        with open(jobs, "w") as f:
            for jid, ref, cand in MAIN_JOBS:
                # paths relative to the jobs file's folder
                f.write(json.dumps({"id": jid, "reference": os.path.relpath(d(ref), tmp),
                                    "candidate": os.path.relpath(d(cand), tmp)}) + "\n")
            f.write(json.dumps({"id": "nope", "reference": d("ref_relu_matmul.py"), "candidate": "no/such.py"}) + "\n")
            f.write("not json\n")
        out = os.path.join(tmp, "main_results.jsonl")
        target_dir = tempfile.mkdtemp(prefix="kiln-judge-target-")
        target = os.path.join(target_dir, "results.jsonl")
        open(target, "w").close()
        summary = run_judge("batch", "--jobs", jobs, "--out", out, "--build-dir", STATE["build"], "--no-timing",
                            "--parallel", "2", "--timeout", "300", env={"KILN_TEST_TARGET": target})
        with open(target) as f:
            STATE["target_text"] = f.read()
        shutil.rmtree(target_dir, ignore_errors=True)
        rs = read_jsonl(out)
        STATE["main"] = {r["id"]: r for r in rs}
        STATE["main_ids"] = [r["id"] for r in rs]
        STATE["main_summary"] = summary
    return STATE["main"]


def timed_batch():
    """One timed batch of the correct and the slow candidate, one at a time (so that neither's timing
    shares the CPU with the other's)."""
    if "timed" not in STATE:
        rows = [{"id": "correct", "reference": d("ref_relu_matmul.py"), "candidate": d("cand_correct.py")},
                {"id": "slow", "reference": d("ref_relu_matmul.py"), "candidate": d("cand_slow.py")}]
        out = os.path.join(STATE["tmp"], "timed_results.jsonl")
        run_judge("batch", "--jobs", write_jobs("timed_jobs.jsonl", rows), "--out", out, "--build-dir", STATE["build"],
                  "--warmup", "2", "--iters", "10", "--parallel", "1")
        STATE["timed"] = {r["id"]: r for r in read_jsonl(out)}
    return STATE["timed"]


class TestProbe(unittest.TestCase):
    def test_probe(self):
        r = run_judge("probe")
        for k in ("ok", "torch", "cuda", "devices", "error"):
            self.assertIn(k, r)
        self.assertTrue(r["ok"], r)
        for dev in r["devices"]:  # none on a CPU machine
            self.assertIn("healthy", dev)

    def test_probe_devices(self):
        # --devices checks only the GPUs named; one that is not there fails the probe
        r = run_judge("probe", "--devices", "0")
        for k in ("ok", "torch", "cuda", "devices", "error"):
            self.assertIn(k, r)
        if r["devices"]:  # a GPU host
            self.assertEqual([d["index"] for d in r["devices"]], [0], r)
            self.assertEqual(r["ok"], bool(r["devices"][0]["healthy"]), r)
        else:
            self.assertFalse(r["ok"], r)
            self.assertIn("no CUDA device 0", r["error"], r)


@unittest.skipIf(J is None, "torch not importable in this interpreter")
class TestHelpers(unittest.TestCase):
    def test_renice(self):
        # kiln's builds run at --nice 10: the process and the compilers it starts yield the CPU
        before = os.nice(0)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                J._renice(3)
                J._renice(0)
                child = int(subprocess.run(["nice"], capture_output=True, text=True).stdout)
                code = 0 if os.nice(0) - before == 3 and child - before == 3 else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        self.assertEqual(os.nice(0), before)

    def test_compare_modes(self):
        ref = torch.full((4, 4), 1e-4)
        zeros = torch.zeros(4, 4)
        self.assertFalse(J.compare(ref, zeros, "magnitude", 1e-2, 1e-3)["ok"])
        self.assertTrue(J.compare(ref, zeros, "kernelbench", 1e-2, 1e-3)["ok"])
        self.assertTrue(J.compare(ref, ref * (1 + 1e-4), "magnitude", 1e-2, 1e-3)["ok"])
        self.assertEqual(J.compare(ref, zeros[:, :3], "magnitude", 1e-2, 1e-3)["cls"], "wrong_shape")
        self.assertEqual(J.compare(ref, zeros.double(), "magnitude", 1e-2, 1e-3)["cls"], "wrong_shape")
        self.assertEqual(J.compare(ref, (ref,), "magnitude", 1e-2, 1e-3)["cls"], "wrong_shape")
        bad = ref.clone()
        bad[1, 2] = float("inf")
        c = J.compare(ref, bad, "magnitude", 1e-2, 1e-3)
        self.assertEqual(c["cls"], "nan")
        self.assertIn("(1, 2)", c["detail"])
        # NaN where the reference has NaN too is not an error
        r2, n2 = ref.clone(), ref.clone()
        r2[0, 0] = n2[0, 0] = float("nan")
        self.assertTrue(J.compare(r2, n2, "magnitude", 1e-2, 1e-3)["ok"])

    def test_slim_cuda_sources(self):
        src = ("#include <torch/extension.h>\n#include <cuda_runtime.h>\n__global__ void k(float* x) {}\n"
               "torch::Tensor f(torch::Tensor x) { return torch::empty_like(x); }\n")
        out = J.slim_cuda_sources([src])
        self.assertEqual(out, [src.replace("<torch/extension.h>", "<torch/types.h>")])
        # the other spellings of the line
        for line in ('#include "torch/extension.h"', "  #  include <torch/extension.h>"):
            out = J.slim_cuda_sources([line + "\n__global__ void k() {}\n"])
            self.assertIsNotNone(out, line)
            self.assertIn("<torch/types.h>", out[0])
            self.assertNotIn("extension.h", out[0])
        # nothing to slim
        self.assertIsNone(J.slim_cuda_sources(["#include <torch/types.h>\n__global__ void k() {}\n"]))
        self.assertIsNone(J.slim_cuda_sources(["// #include <torch/extension.h> later\n"]))
        # a source that visibly needs the full header is built as written
        for needs in ("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f); }",
                      "namespace F = torch::nn::functional; auto o = torch::nn::functional::GELUFuncOptions();",
                      "py::object o;", "torch::NoGradGuard g;", "PyObject* p = PyLong_FromLong(1);",
                      "auto n = torch::cuda::device_count();"):
            self.assertIsNone(J.slim_cuda_sources([src + needs + "\n"]), needs)
        # ... but not when it only says so in a comment
        self.assertIsNotNone(J.slim_cuda_sources([src + "// torch::nn::functional would do this\n"]))

    def _fake_torch_include(self, tmp):
        inc = os.path.join(tmp, "include")
        os.makedirs(os.path.join(inc, "ATen", "ops"))
        for op in ("zeros_like", "relu", "empty"):
            open(os.path.join(inc, "ATen", "ops", op + ".h"), "w").close()
        tdir = os.path.join(inc, "torch", "csrc", "api", "include", "torch")
        os.makedirs(tdir)
        with open(os.path.join(tdir, "types.h"), "w") as f:  # with a guard, as newer torch writes it
            f.write("#pragma once\n#if !defined(TORCH_STABLE_ONLY)\n#include <ATen/ATen.h>\n#include <optional>\n"
                    "#include <torch/library.h>\n#include <ATen/core/dispatch/Dispatcher.h>\n"
                    "namespace torch {\nusing namespace at;\nconstexpr auto kF32 = at::kFloat;\n}\n"
                    "#else\n#error stable only\n#endif\n")
        return inc

    def test_perop_cuda_sources(self):
        tmp = tempfile.mkdtemp(prefix="kiln-perop-")
        try:
            inc = self._fake_torch_include(tmp)
            src = ("#include <torch/extension.h>\n// torch::empty( in a comment only\n"
                   "__global__ void k(float* x) {}\n"
                   "torch::Tensor f(torch::Tensor x) { auto y = torch::zeros_like(x); "
                   "return at::relu (y) + torch::not_an_op(x) + torch::sum<float>(x); }\n")
            out, ops = J.perop_cuda_sources([src], inc)
            self.assertEqual(ops, ["relu", "zeros_like"])  # named in code, with a header; not in comments
            self.assertEqual(len(out), 2)
            prelude, body = out
            lines = prelude.splitlines()
            self.assertEqual(lines[:3], ["#include <cuda.h>", "#include <cuda_runtime.h>", "#define AT_PER_OPERATOR_HEADERS"])
            self.assertIn("#include <ATen/core/Tensor.h>", lines)
            self.assertIn("#include <ATen/ops/relu.h>", lines)
            self.assertIn("#undef AT_PER_OPERATOR_HEADERS", lines)
            # torch/types.h itself, less the whole of ATen, the dispatcher, torch/library.h and its pragma
            self.assertIn("namespace torch {", prelude)
            self.assertIn("#if !defined(TORCH_STABLE_ONLY)", prelude)
            self.assertIn("#include <optional>", prelude)
            for gone in ("ATen/ATen.h", "torch/library.h", "Dispatcher.h", "pragma once"):
                self.assertNotIn(gone, prelude)
            # the source keeps its lines; its include of the full header is gone
            self.assertEqual(body.count("\n"), src.count("\n"))
            self.assertNotIn("torch/extension.h", body)
            self.assertTrue(body.startswith("#include <cuda_runtime.h>\n"))
            # with `using namespace torch;` a bare call may be an operator too (not a method call)
            _, ops = J.perop_cuda_sources(["#include <torch/extension.h>\nusing namespace torch;\n"
                                           "Tensor f(Tensor x) { return relu(x).empty(); }\n"], inc)
            self.assertEqual(ops, ["relu"])
            # where the slim build would not be tried, nor is the prelude
            self.assertEqual(J.perop_cuda_sources([src + "torch::nn::Linear l(1, 1);\n"], inc), (None, []))
            self.assertEqual(J.perop_cuda_sources(["#include <torch/types.h>\n"], inc), (None, []))
            # a torch without per-operator headers
            self.assertEqual(J.perop_cuda_sources([src], tmp), (None, []))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @unittest.skipUnless(shutil.which("g++"), "no g++")
    def test_perop_prelude_compiles_with_the_installed_torch(self):
        # the prelude's torch part against the real headers (the CUDA lines left out: no CUDA here)
        inc = J.torch_include_dir()
        if not os.path.isdir(os.path.join(inc, "ATen", "ops")):
            self.skipTest("this torch has no per-operator headers")
        src = ("#include <torch/extension.h>\n"
               "torch::Tensor f(torch::Tensor a, torch::Tensor b) {\n"
               "  TORCH_CHECK(a.is_contiguous(), \"a must be contiguous\");\n"
               "  auto out = torch::zeros_like(a);\n"
               "  auto o2 = torch::empty({a.size(0), 3}, a.options().dtype(torch::kFloat32));\n"
               "  auto s = at::matmul(a, b) + torch::relu(a) * 2;\n"
               "  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), \"f\", [&] { (void)a.data_ptr<scalar_t>(); });\n"
               "  return out + s.sum() + o2.mean();\n}\n")
        out, ops = J.perop_cuda_sources([src], inc)
        self.assertEqual(ops, ["empty", "matmul", "relu", "zeros_like"])
        text = "\n".join(out).replace("#include <cuda.h>\n", "").replace("#include <cuda_runtime.h>", "")
        tmp = tempfile.mkdtemp(prefix="kiln-perop-")
        try:
            def gxx(source):
                path = os.path.join(tmp, "p.cpp")
                with open(path, "w") as f:
                    f.write(source)
                return subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-isystem", inc, "-isystem",
                                       os.path.join(inc, "torch", "csrc", "api", "include"), path],
                                      capture_output=True, text=True, timeout=300)

            p = gxx(text)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            # and a source that needs a declaration the prelude leaves out fails, as the fallback expects
            p = gxx(text + "\nauto g(torch::Tensor a) { return at::cumsum(a, 0); }\n")
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("cumsum", p.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_perop_build_and_its_fallback(self):
        tmp = tempfile.mkdtemp(prefix="kiln-perop-")
        try:
            src = "#include <torch/extension.h>\n__global__ void k(float* x) {}\n"
            for ok in (True, False):
                cache = J.BuildCache(os.path.join(tmp, str(ok)))
                cache.perop = True
                seen = []

                def fake(**kw):
                    seen.append(kw)
                    if kw.get("no_implicit_headers") and not ok:
                        raise RuntimeError("Error building extension 'x': 'cumsum' is not a member of 'at'")
                    return "built"

                cache.orig_inline = fake
                self.assertEqual(cache.load_inline("ext", "torch::Tensor f(torch::Tensor x);", cuda_sources=src,
                                                   functions=["f"]), "built")
                first = seen[0]
                self.assertTrue(first["no_implicit_headers"])
                self.assertEqual(first["cpp_sources"], ["#include <torch/extension.h>", "torch::Tensor f(torch::Tensor x);"])
                self.assertIn("#define AT_PER_OPERATOR_HEADERS", first["cuda_sources"][0])
                self.assertEqual(cache.calls[-1]["header"], J.PEROP_NAME)
                self.assertEqual(cache.calls[-1]["slim"], ok)
                self.assertEqual(len(seen), 1 if ok else 2)
                if not ok:  # then exactly as written: load_inline's own implicit headers
                    self.assertFalse(seen[1].get("no_implicit_headers"))
                    self.assertEqual(seen[1]["cuda_sources"], src)
                    self.assertEqual(seen[1]["cpp_sources"], "torch::Tensor f(torch::Tensor x);")
                with open(os.path.join(cache.root, cache.calls[-1]["key"], "kiln_done.json")) as f:
                    done = json.load(f)
                self.assertEqual(done["header"], J.PEROP_NAME)
                self.assertEqual(done["slim"], ok)
            # a candidate that turns the implicit headers off itself is not given the prelude (load_inline's
            # signature as torch 2.8 and later have it, whatever this torch is)
            def load_inline_28(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
                               with_cuda=None, is_python_module=True, no_implicit_headers=False):
                pass

            cache = J.BuildCache(os.path.join(tmp, "own"))
            cache.perop, cache.sig_inline = True, inspect.signature(load_inline_28)
            seen = []
            cache.orig_inline = lambda **kw: seen.append(kw) or "built"
            cache.load_inline("ext", "", cuda_sources=src, functions=[], no_implicit_headers=True)
            self.assertEqual(len(seen), 1)
            # (the slim build, which keeps its own includes)
            self.assertNotIn("AT_PER_OPERATOR_HEADERS", J._norm_sources(seen[0]["cuda_sources"])[0])
            self.assertEqual(cache.calls[-1]["header"], "<torch/types.h>")
            self.assertTrue(seen[0]["no_implicit_headers"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_slim_build_falls_back_to_the_source_as_written(self):
        tmp = tempfile.mkdtemp(prefix="kiln-slim-")
        try:
            src = "#include <torch/extension.h>\n__global__ void k(float* x) {}\n"
            for slim_ok, want_slim in ((True, True), (False, False)):
                cache = J.BuildCache(os.path.join(tmp, str(slim_ok)))
                cache.perop = False  # as with a torch whose load_inline has no no_implicit_headers
                seen = []

                def fake(**kw):
                    cuda = J._norm_sources(kw["cuda_sources"])
                    seen.append(cuda[0])
                    if "<torch/types.h>" in cuda[0] and not slim_ok:
                        raise RuntimeError("Error building extension 'x': 'torch::nn' has not been declared")
                    return "module built from %d sources" % len(cuda)

                cache.orig_inline = fake
                mod = cache.load_inline("ext", "torch::Tensor f(torch::Tensor x);", cuda_sources=src, functions=["f"])
                self.assertEqual(mod, "module built from 1 sources")
                self.assertEqual(cache.calls[-1]["slim"], want_slim)
                self.assertTrue(cache.calls[-1]["ok"])
                self.assertEqual(cache.errors, [])  # a failed slim build is no compiler message of the candidate
                self.assertEqual(len(seen), 1 if slim_ok else 2, seen)
                self.assertIn("<torch/types.h>", seen[0])
                if not slim_ok:
                    self.assertEqual(seen[1], src)
            # a source that fails as written too: that build's error is the one kept
            cache = J.BuildCache(os.path.join(tmp, "broken"))
            cache.perop = False

            def broken(**kw):
                raise RuntimeError("Error building extension 'x': error: expected ';' (%s)" %
                                   ("slim" if "types.h" in J._norm_sources(kw["cuda_sources"])[0] else "as written"))

            cache.orig_inline = broken
            with self.assertRaises(RuntimeError):
                cache.load_inline("ext", "", cuda_sources=src, functions=[])
            self.assertEqual(len(cache.errors), 1)
            self.assertIn("as written", cache.errors[0])
            self.assertFalse(cache.calls[-1]["ok"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_global_names_and_kernel_match(self):
        src = ["template <int A> __global__ void __launch_bounds__(256) gemm_k(float* x) {}\n"
               "// __global__ void commented_out(int)\n__global__ static void relu_kernel(float*, int n);"]
        names = J.global_function_names(src)
        self.assertEqual(names, ["gemm_k", "relu_kernel"])
        kernels = ["void gemm_k<1>(float*)", "void at::native::vectorized_elementwise_kernel<4>(int)",
                   "_Z11relu_kernelPfi"]
        self.assertEqual(J._match_kernels(kernels, names), ["_Z11relu_kernelPfi", "void gemm_k<1>(float*)"])
        self.assertEqual(J._match_kernels(kernels, ["vectorized_elementwise_kernel"],
                                          exclude=["void at::native::vectorized_elementwise_kernel<4>(int)"]), [])

    def test_stream_trial_decision(self):
        """stream_trial's decision with the GPU calls faked: the first call is under a busy
        non-blocking current stream, the second under the judge's busy blocking stream."""
        ref = torch.ones(4)
        o = {"tolerance": "magnitude", "rtol": 1e-2, "atol_scale": 1e-3}
        saved = (J._busy_stream_call, J._BlockingStream, J._ORIG_STREAM_CLS)
        events = []

        class FakeBlocking:
            fail = None

            def __init__(self, dev):
                pass

            def open(self):
                if FakeBlocking.fail:
                    raise RuntimeError(FakeBlocking.fail)
                events.append("open")
                return "blocking"

            def close(self):
                events.append("close")

        def run(outs, fail=None):
            calls = []
            FakeBlocking.fail = fail
            del events[:]

            def call(new, inp, dev, stream):
                calls.append(stream)
                return outs[len(calls) - 1]
            J._busy_stream_call, J._BlockingStream, J._ORIG_STREAM_CLS = call, FakeBlocking, lambda device: "nonblocking"
            try:
                return J.stream_trial(None, ref, [], "cuda", o), calls
            finally:
                J._busy_stream_call, J._BlockingStream, J._ORIG_STREAM_CLS = saved

        nan = torch.full((4,), float("nan"))
        r, calls = run([ref.clone()])
        self.assertEqual((r, calls), ({"stream": "current"}, ["nonblocking"]))
        r, calls = run([nan, ref.clone()])
        self.assertEqual((r, calls, events), ({"stream": "legacy_default"}, ["nonblocking", "blocking"], ["open", "close"]))
        r, calls = run([nan, nan])
        self.assertEqual((r["stream"], r["cls"], calls), ("side", "wrong_output", ["nonblocking", "blocking"]))
        self.assertIn("stream of their own", r["detail"])
        self.assertEqual(events, ["open", "close"])  # closed after the candidate's call
        r, calls = run([nan], fail="cuStreamCreate(CU_STREAM_DEFAULT) failed: CUresult 201")
        self.assertEqual((r["stream"], r["cls"], calls), ("side", "wrong_output", ["nonblocking"]))
        self.assertIn("could not run", r["detail"])

    def test_finalize_speed(self):
        o = {"tolerance": "magnitude", "rtol": 1e-2, "atol_scale": 1e-3}
        for sp, fast in ((0.25, False), (1.0, False), (3.0, True), (None, None)):
            r = J.new_result(o)
            r.update(correct=True, speedup=sp)
            J.finalize(r)
            self.assertEqual((r["pass"], r["class"], r["fast"]), (True, "", fast), sp)
        r = J.new_result(o)
        r.update(correct=False, speedup=0.5)
        J.finalize(r, fail="wrong_output")
        self.assertEqual((r["pass"], r["class"], r["fast"]), (False, "wrong_output", False))

    def test_static_scan_passes_peer_answers(self):
        """The peer suite (../peers, answers in the styles models and KernelBench write) has no
        hit in the source scan: a hit would make a correct answer suspected_cheating."""
        with open(os.path.join(HERE, "..", "peers", "manifest.json")) as f:
            peers = json.load(f)
        self.assertGreaterEqual(len(peers), 8)
        for p in peers:
            for rel in (p["answer"], p["twin"]):
                with open(os.path.join(HERE, "..", rel)) as f:
                    self.assertEqual(J.static_scan(f.read()), [], rel)

    def test_static_scan(self):
        with open(d("cand_correct.py")) as f:
            self.assertEqual(J.static_scan(f.read()), [])
        self.assertTrue(J.static_scan("import sys\nsys.modules['__main__'].compare = None\n"))
        self.assertTrue(J.static_scan("import gc\n"))
        self.assertTrue(J.static_scan("time.perf_counter = lambda: 0\n"))
        self.assertEqual(J.static_scan("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0'\n"
                                       "torch.backends.cudnn.benchmark = True\nif __name__ == '__main__':\n  pass\n"),
                         [])


class TestVerdicts(unittest.TestCase):
    @needs_build
    def test_correct_passes(self):
        for jid in ("correct", "small_correct"):
            r = main_batch()[jid]
            self.assertTrue(r["pass"], r)
            self.assertEqual(r["class"], "")
            self.assertTrue(r["correct"])
            self.assertEqual(r["suspicion"], [])
            self.assertEqual([s["name"] for s in r["stages"]],
                             ["reference", "load", "compile", "init", "correctness", "anticheat", "timing"])
            self.assertTrue(r["stages"][-1]["skipped"])  # --no-timing
            self.assertLess(r["max_abs_err"], 1e-3)
            self.assertEqual(r["reference_ops"], ["mm", "mul", "relu"] if jid == "small_correct" else ["mm", "relu"])
            self.assertEqual(r["torch_ops"], [])
            self.assertEqual(r["timing_device"], "cpu")
            self.assertEqual(r["id"], jid)

    @needs_build
    def test_zeros_magnitude_vs_kernelbench(self):
        r = main_batch()["zeros_small"]
        self.assertEqual(r["class"], "wrong_output", r)
        self.assertFalse(r["correct"])
        self.assertIn("first at index", r["diagnostic"])
        self.assertEqual(r["tolerance"]["mode"], "magnitude")
        # the documented hole of KernelBench's allclose(atol=rtol=1e-2): all-zero output passes
        k = run_judge("judge", "--reference", d("ref_small_scale.py"), "--candidate", d("cand_zeros.py"),
                      "--build-dir", STATE["build"], "--tolerance", "kernelbench", "--no-timing")
        self.assertTrue(k["correct"], k)
        self.assertEqual(k["class"], "", k)
        self.assertEqual(k["tolerance"], {"mode": "kernelbench", "rtol": 0.01, "atol": 0.01, "atol_scale": None})

    @needs_build
    def test_torch_fallback(self):
        r = main_batch()["fallback"]
        self.assertEqual(r["class"], "suspected_cheating", r)
        self.assertTrue(r["correct"])
        self.assertTrue(any(s.startswith("torch fallback") for s in r["suspicion"]), r["suspicion"])
        self.assertEqual(r["torch_ops"], ["mm", "relu"])

    @needs_build
    def test_results_cached_across_calls(self):
        r = main_batch()["cache"]
        self.assertEqual(r["class"], "suspected_cheating", r)
        self.assertTrue(r["correct"], r)  # passes fresh inputs, caught by the anti-cheat call pair
        self.assertIn("results cached across calls", r["suspicion"])

    @needs_build
    def test_wrong_shape_and_nan(self):
        r = main_batch()["wrong_shape"]
        self.assertEqual(r["class"], "wrong_shape", r)
        self.assertIn("(32, 47)", r["diagnostic"])
        r = main_batch()["nan"]
        self.assertEqual(r["class"], "nan", r)
        self.assertIn("(3, 5)", r["diagnostic"])

    @needs_build
    def test_modifies_inputs(self):
        r = main_batch()["inplace"]
        self.assertEqual(r["class"], "suspected_cheating", r)
        self.assertIn("modifies its inputs", r["suspicion"])

    @needs_build
    def test_timing_tampering(self):
        r = main_batch()["perf_counter"]
        self.assertEqual(r["class"], "suspected_cheating", r)
        self.assertTrue(any(s.startswith("timing tampering") and "time.perf_counter" in s for s in r["suspicion"]),
                        r["suspicion"])

    @needs_build
    def test_write_guard(self):
        r = main_batch()["write_outside"]
        self.assertTrue(r["correct"], r)
        if not str(r.get("fs_guard", "")).startswith("landlock"):
            self.skipTest("Landlock not available here: %s" % r.get("fs_guard"))
        self.assertEqual(STATE["target_text"], "", "the candidate wrote outside the build/scratch dirs")

    def test_syntax_error(self):
        r = main_batch()["syntax"]
        self.assertEqual(r["class"], "compile_error", r)
        self.assertIn("SyntaxError", r["diagnostic"])
        self.assertIn("cand_syntax.py", r["diagnostic"])

    def test_no_custom_code(self):
        r = main_batch()["no_ext"]
        self.assertEqual(r["class"], "suspected_cheating", r)
        self.assertIn("no custom code built", r["suspicion"])

    @needs_build
    def test_cpp_compile_error(self):
        r = main_batch()["compile_error"]
        self.assertEqual(r["class"], "compile_error", r)
        self.assertIn("undeclared_identifier_kiln", r["diagnostic"])
        self.assertIn("error", r["diagnostic"])
        c = run_judge("compile", "--candidate", d("cand_compile_error.py"), "--build-dir", STATE["build"])
        self.assertFalse(c["ok"])
        self.assertEqual(c["class"], "compile_error")
        self.assertIn("undeclared_identifier_kiln", c["diagnostic"])
        self.assertTrue(c["cached"], c)  # failed builds are cached too


class TestCacheAndTiming(unittest.TestCase):
    @needs_build
    def test_compile_cache(self):
        first = STATE["first_compile"]
        self.assertFalse(first["cached"], first)
        self.assertGreater(first["compile_ms"], 1000)
        # The main batch judged cand_correct.py after setUpModule built it.
        r = main_batch()["correct"]
        self.assertTrue(r["compile_cached"], r)
        self.assertLess(r["compile_ms"], first["compile_ms"] / 5)
        # the extension name is not part of the key: a renamed copy hits the same cache entry
        renamed = os.path.join(STATE["tmp"], "cand_renamed.py")
        with open(d("cand_correct.py")) as f:
            text = f.read().replace('name="judge_test_common"', 'name="some_other_name"')
        with open(renamed, "w") as f:
            f.write(text)
        c = run_judge("compile", "--candidate", renamed, "--build-dir", STATE["build"])
        self.assertTrue(c["ok"] and c["cached"], c)
        self.assertEqual(c["keys"], first["keys"])

    @needs_build
    def test_timing_figures(self):
        r = timed_batch()["correct"]
        self.assertTrue(r["correct"], r)
        self.assertEqual(r["class"], "", r)  # correct is a pass, faster than torch or not
        self.assertTrue(r["pass"], r)
        self.assertEqual(r["fast"], r["speedup"] > 1, r)
        self.assertIsNone(r["stream"], r)  # the stream trial runs on CUDA only
        for k in ("t_ref_ms", "t_new_ms", "wall_ref_ms", "wall_new_ms", "speedup"):
            self.assertIsInstance(r[k], float, k)
            self.assertGreater(r[k], 0)
        self.assertAlmostEqual(r["speedup"], r["t_ref_ms"] / r["t_new_ms"], places=6)
        self.assertEqual(r["timing_device"], "cpu")
        self.assertEqual(r["timing_iters"], 10)


    @needs_build
    def test_correct_but_slower_is_a_pass(self):
        r = timed_batch()["slow"]
        self.assertTrue(r["correct"], r)
        self.assertLess(r["speedup"], 1.0, r)
        self.assertIs(r["fast"], False, r)
        self.assertTrue(r["pass"], r)
        self.assertEqual(r["class"], "", r)
        self.assertEqual(r["suspicion"], [], r)
        self.assertEqual(r["diagnostic"], "", r)

    def test_untimed_result_has_speed_and_stream_fields(self):
        r = main_batch()["syntax"]
        for k in ("speedup", "fast", "stream"):
            self.assertIn(k, r)
            self.assertIsNone(r[k], k)


class TestIsolation(unittest.TestCase):
    @needs_build
    def test_hang_and_crash_do_not_disturb_the_next_job(self):
        tmp = STATE["tmp"]
        spec = [("crash", "cand_crash.py"), ("after_crash", "cand_correct.py"), ("hang", "cand_hang.py"),
                ("after_hang", "cand_correct.py")]
        jobs = write_jobs("iso_jobs.jsonl", relu_jobs(spec))
        out = os.path.join(tmp, "iso_results.jsonl")
        t0 = time.time()
        run_judge("batch", "--jobs", jobs, "--out", out, "--build-dir", STATE["build"], "--no-timing",
                  "--timeout", "6")
        rs = read_jsonl(out)
        self.assertEqual([r["id"] for r in rs], [j for j, _ in spec])
        by = {r["id"]: r for r in rs}
        self.assertEqual(by["crash"]["class"], "runtime_error", by["crash"])
        self.assertIn("SIGSEGV", by["crash"]["diagnostic"])
        self.assertEqual(by["hang"]["class"], "timeout", by["hang"])
        self.assertIn("correctness", by["hang"]["diagnostic"])
        for jid in ("after_crash", "after_hang"):
            self.assertTrue(by[jid]["pass"], by[jid])
        self.assertLess(time.time() - t0, 60)

    @needs_build
    def test_partial_results_survive_a_kill(self):
        tmp = STATE["tmp"]
        jobs = os.path.join(tmp, "kill_jobs_%d.jsonl" % os.getpid())
        with open(jobs, "w") as f:
            f.write(json.dumps({"id": "first", "reference": d("ref_relu_matmul.py"),
                                "candidate": d("cand_correct.py")}) + "\n")
            f.write(json.dumps({"id": "stuck", "reference": d("ref_relu_matmul.py"),
                                "candidate": d("cand_hang.py")}) + "\n")
        out = os.path.join(tmp, "kill_results.jsonl")
        p = subprocess.Popen([PY, JUDGE, "batch", "--jobs", jobs, "--out", out, "--build-dir", STATE["build"],
                              "--no-timing", "--timeout", "120"], cwd=tmp,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 60
            while time.time() < deadline:
                if os.path.exists(out) and os.path.getsize(out) > 0:
                    break
                time.sleep(0.1)
            time.sleep(1.0)  # the hanging job is running now
            p.kill()
            p.wait(10)
        finally:
            if p.poll() is None:
                p.kill()
        rs = read_jsonl(out)
        self.assertEqual([r["id"] for r in rs], ["first"])
        self.assertTrue(rs[0]["pass"], rs[0])
        # the orphaned evaluation process dies with its parent (PR_SET_PDEATHSIG)
        deadline = time.time() + 10
        left = None
        while time.time() < deadline:
            left = []
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as f:
                        if jobs.encode() in f.read():
                            left.append(int(pid))
                except OSError:
                    pass
            if not left:
                break
            time.sleep(0.2)
        for pid in left or []:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.assertEqual(left, [], "evaluation processes outlived the killed judge")

    def test_missing_files_are_reported_per_job(self):
        # The main batch's two bad lines, after its fixtures: one result each, neither a pass.
        by = main_batch()
        self.assertEqual(sorted(STATE["main_ids"]), sorted([jid for jid, _, _ in MAIN_JOBS] + MAIN_BAD_IDS))
        self.assertTrue(all(not by[jid]["pass"] for jid in MAIN_BAD_IDS), [by[jid] for jid in MAIN_BAD_IDS])


PROBLEMS = os.path.join(DATA, "problems")

# The broken problems of testdata/problems and the reason each must give.
BROKEN = [("raises", "crash"), ("nondet", "nondeterministic"), ("hang", "timeout"), ("oom", "oom"),
          ("killed", "oom"), ("segv", "crash"), ("invalid", "invalid")]

CANDIDATE_CLASSES = {"compile_error", "runtime_error", "illegal_memory", "timeout", "wrong_output", "wrong_shape", "nan",
                     "suspected_cheating", "slower"}


def relu_jobs(spec):
    """Job rows of (id, candidate fixture) pairs against ref_relu_matmul.py."""
    return [{"id": jid, "reference": d("ref_relu_matmul.py"), "candidate": d(cand)} for jid, cand in spec]


def write_jobs(name, rows):
    path = os.path.join(STATE["tmp"], name)
    with open(path, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    return path


class TestServe(unittest.TestCase):
    @needs_build
    def test_serve_takes_jobs_as_they_come(self):
        """`serve` judges the jobs that arrive in its inbox, writes each result as it is ready, keeps
        going between them, and ends at the stop file."""
        tmp = tempfile.mkdtemp(prefix="kiln-serve-", dir=STATE["tmp"])
        inbox, outbox = os.path.join(tmp, "inbox"), os.path.join(tmp, "outbox")
        os.makedirs(inbox)
        p = subprocess.Popen([PY, JUDGE, "serve", "--inbox", inbox, "--outbox", outbox, "--build-dir", STATE["build"],
                              "--no-timing", "--parallel", "2", "--timeout", "300", "--idle-exit", "120"],
                             cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            def send(jid, ref, cand):
                # paths relative to the working folder, the ready mark last
                with open(os.path.join(inbox, jid + ".json"), "w") as f:
                    json.dump({"reference": os.path.relpath(d(ref), tmp), "candidate": os.path.relpath(d(cand), tmp)}, f)
                open(os.path.join(inbox, jid + ".ready"), "w").close()

            def wait(jid):
                path = os.path.join(outbox, jid + ".json")
                deadline = time.time() + 240
                while not os.path.exists(path):
                    self.assertIsNone(p.poll(), "serve ended early: %s" % p.stderr.read()[-2000:] if p.poll() else "")
                    self.assertLess(time.time(), deadline, "no result for " + jid)
                    time.sleep(0.1)
                with open(path) as f:
                    return json.load(f)

            send("1", "ref_relu_matmul.py", "cand_correct.py")
            r1 = wait("1")
            self.assertEqual(r1["id"], "1")
            self.assertTrue(r1["correct"], r1)
            # the job files are taken; the process waits for more
            self.assertEqual(sorted(os.listdir(inbox)), [])
            time.sleep(1.0)
            self.assertIsNone(p.poll())
            send("2", "ref_relu_matmul.py", "cand_wrong_shape.py")
            send("3", "ref_relu_matmul.py", "cand_correct.py")
            with open(os.path.join(inbox, "4.json"), "w") as f:
                f.write("{not json")
            open(os.path.join(inbox, "4.ready"), "w").close()
            r2, r3, r4 = wait("2"), wait("3"), wait("4")
            self.assertEqual(r2["class"], "wrong_shape")
            self.assertTrue(r3["correct"], r3)
            self.assertEqual(r4["class"], "runtime_error")
            self.assertIn("bad job", r4["diagnostic"])
            # a job written without its ready mark is not taken
            with open(os.path.join(inbox, "5.json"), "w") as f:
                json.dump({"reference": d("ref_relu_matmul.py"), "candidate": d("cand_correct.py")}, f)
            open(os.path.join(inbox, "stop"), "w").close()
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err[-2000:])
            summary = json.loads(out.strip().splitlines()[-1])
            self.assertEqual(summary["served"], 4, summary)
            self.assertTrue(summary["stopped"])
            self.assertFalse(os.path.exists(os.path.join(outbox, "5.json")))
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_inbox_feed_idle_exit(self):
        tmp = tempfile.mkdtemp(prefix="kiln-feed-")
        try:
            feed = J.InboxFeed(tmp, 0.2)
            self.assertEqual(feed.poll(), [])
            self.assertFalse(feed.done())
            time.sleep(0.3)
            self.assertTrue(feed.done())
            forever = J.InboxFeed(tmp, 0)
            forever.done()
            time.sleep(0.1)
            self.assertFalse(forever.done())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class TestExclusiveTiming(unittest.TestCase):
    @needs_build
    def test_timing_alone_on_a_shared_device(self):
        """Three children share the (CPU) device with --exclusive-timing: no child's timing
        overlaps any other child's evaluation, and the time a child waits for its turn (here
        behind a hung neighbour until the parent kills it) is not charged to it."""
        tmp = STATE["tmp"]
        spec = [("hang", "cand_hang.py"), ("correct1", "cand_correct.py"), ("slow", "cand_slow.py"),
                ("correct2", "cand_correct.py")]
        jobs = write_jobs("excl_jobs.jsonl", relu_jobs(spec))
        out = os.path.join(tmp, "excl_results.jsonl")
        run_judge("batch", "--jobs", jobs, "--out", out, "--build-dir", STATE["build"], "--device", "cpu",
                  "--parallel", "3", "--exclusive-timing", "--warmup", "2", "--iters", "10", "--timeout", "6")
        by = {r["id"]: r for r in read_jsonl(out)}
        self.assertEqual(by["hang"]["class"], "timeout", by["hang"])
        windows = {}
        for jid in ("correct1", "slow", "correct2"):
            r = by[jid]
            self.assertTrue(r["pass"], r)
            self.assertIsInstance(r["speedup"], float, r)
            w = r["device_lock"]["windows"]
            self.assertEqual([m for m, _, _ in w], ["shared", "exclusive"], r["device_lock"])
            windows[jid] = w
        # the first child to time waited for the hung one to be killed (about 6 s)
        self.assertGreater(max(by[j]["device_lock"]["waited_ms"] for j in windows), 2000, windows)
        for jid, w in windows.items():
            _, t0, t1 = w[1]
            for other, ow in windows.items():
                if other == jid:
                    continue
                for mode, a, b in ow:
                    self.assertFalse(a < t1 and t0 < b, "%s timed during %s's %s hold: %s" % (jid, other, mode, windows))
        # without the flag no child waits or reports a lock
        out2 = os.path.join(tmp, "excl_results2.jsonl")
        jobs = write_jobs("excl_jobs1.jsonl", relu_jobs([("c", "cand_correct.py")]))
        run_judge("batch", "--jobs", jobs, "--out", out2, "--build-dir", STATE["build"], "--device", "cpu",
                  "--parallel", "2", "--warmup", "2", "--iters", "10")
        self.assertNotIn("device_lock", read_jsonl(out2)[0])


class TestReferenceErrors(unittest.TestCase):
    """A problem whose reference fails (before any candidate code runs) gives
    reference_error with the reason, never a candidate's class."""

    @needs_build
    def test_broken_references(self):
        rows = [{"id": name, "reference": os.path.join(PROBLEMS, "ref_%s.py" % name), "candidate": d("cand_correct.py")}
                for name, _ in BROKEN]
        rows.append({"id": "sound", "reference": d("ref_relu_matmul.py"), "candidate": d("cand_correct.py")})
        out = os.path.join(STATE["tmp"], "referr_results.jsonl")
        run_judge("batch", "--jobs", write_jobs("referr_jobs.jsonl", rows), "--out", out, "--build-dir", STATE["build"],
                  "--no-timing", "--timeout", "120", "--reference-timeout", "6")
        by = {r["id"]: r for r in read_jsonl(out)}
        for name, reason in BROKEN:
            r = by[name]
            self.assertEqual(r["class"], "reference_error", r)
            self.assertNotIn(r["class"], CANDIDATE_CLASSES)
            self.assertFalse(r["pass"], r)
            self.assertTrue(r.get("reference_error"), r)
            self.assertEqual(r.get("reference_reason"), reason, r)
            self.assertTrue(r["diagnostic"].startswith("the problem's reference failed (%s)" % reason), r["diagnostic"])
            self.assertEqual([s["name"] for s in r["stages"]], ["reference"], r["stages"])  # no candidate code ran
            self.assertFalse(r.get("judge_error"), r)
        self.assertIn("shapes cannot be multiplied", by["raises"]["diagnostic"])
        self.assertIn("SIGSEGV", by["segv"]["diagnostic"])
        self.assertIn("no get_inputs", by["invalid"]["diagnostic"])
        self.assertTrue(by["sound"]["pass"], by["sound"])
        self.assertFalse(by["sound"].get("reference_error"), by["sound"])

    @needs_build
    def test_reference_time_is_not_the_candidates(self):
        # The reference takes 6 s to build; the candidate's 5 s start after the reference stage.
        # One batch, its two jobs side by side, each with the timeouts of its own line (as the lane gives them).
        ref = os.path.join(PROBLEMS, "ref_slow_init.py")
        rows = [{"id": "own", "reference": ref, "candidate": d("cand_correct.py"), "timeout": 5, "reference_timeout": 30},
                {"id": "shared", "reference": ref, "candidate": d("cand_correct.py"), "timeout": 3}]
        out = os.path.join(STATE["tmp"], "reftime_results.jsonl")
        run_judge("batch", "--jobs", write_jobs("reftime_jobs.jsonl", rows), "--out", out, "--build-dir",
                  STATE["build"], "--no-timing", "--parallel", "2", "--timeout", "120")
        by = {r["id"]: r for r in read_jsonl(out)}
        r = by["own"]
        self.assertTrue(r["pass"], r)
        self.assertGreater(r["stages"][0]["ms"], 5000, r["stages"][0])
        r = by["shared"]  # no reference timeout of its own: the reference gets the job's 3 s too
        self.assertEqual((r["class"], r.get("reference_reason")), ("reference_error", "timeout"), r)

    @needs_build
    def test_inputs_drawn_again_within_a_memory_budget(self):
        # A hold budget too small for any set: inputs are drawn again at each use, one trial;
        # the verdicts stay right (a correct candidate, a cache cheat, an in-place cheat).
        rows = [{"id": c, "reference": d("ref_relu_matmul.py"), "candidate": d("cand_%s.py" % c)}
                for c in ("correct", "cache", "inplace", "nan")]
        out = os.path.join(STATE["tmp"], "hold_results.jsonl")
        run_judge("batch", "--jobs", write_jobs("hold_jobs.jsonl", rows), "--out", out, "--build-dir", STATE["build"],
                  "--no-timing", "--timeout", "120", "--hold-memory", "1e-12")
        by = {r["id"]: r for r in read_jsonl(out)}
        for r in by.values():
            self.assertEqual(r["reference"]["inputs_held"], False, r["reference"])
            self.assertEqual(r["reference"]["trials"], 1, r["reference"])
            self.assertEqual(r["reference"]["input_draw"], "cpu", r["reference"])
        self.assertTrue(by["correct"]["pass"], by["correct"])
        self.assertIn("results cached across calls", by["cache"]["suspicion"])
        self.assertIn("modifies its inputs", by["inplace"]["suspicion"])
        self.assertEqual(by["nan"]["class"], "nan", by["nan"])


class TestCheck(unittest.TestCase):
    def test_check_one(self):
        r = run_judge("check", "--reference", d("ref_relu_matmul.py"), "--device", "cpu", "--runs", "3")
        self.assertTrue(r["ok"], r)
        self.assertIsNone(r["reason"])
        self.assertEqual([s["name"] for s in r["stages"]], ["load", "init", "inputs", "forward", "timing"])
        self.assertGreater(r["ref_ms"], 0)
        self.assertEqual(len(r["ref_ms_runs"]), 3)
        self.assertEqual(r["inputs"], [{"shape": [32, 64], "dtype": "float32", "bytes": 32 * 64 * 4}])
        self.assertEqual(r["input_bytes"], 32 * 64 * 4)
        self.assertEqual(r["output_bytes"], 32 * 48 * 4)
        out = r["outputs"][0]
        self.assertEqual((out["path"], out["shape"], out["dtype"]), ("out", [32, 48], "float32"))
        self.assertGreaterEqual(out["min"], 0.0)  # relu
        self.assertTrue(out["finite"])
        self.assertTrue(r["bitwise_deterministic"])
        self.assertEqual(r["input_draw"], "cpu")
        self.assertIsNone(r["peak_bytes"])  # no GPU: no device peak
        self.assertEqual(r["timing_device"], "cpu")
        self.assertEqual(r["returns_input"], [])

    def test_check_returns_input(self):
        # A forward that returns its input (itself, or a copy) is found: it asks for no kernel.
        # One check process for the three problems.
        want = {"same": ["out = input 0"], "copy": ["out = input 0"], "second": ["out[1] = input 1"]}
        rows = []
        for name, ret in (("same", "x"), ("copy", "x.clone()"), ("second", "(x * 2, y.clone())")):
            p = os.path.join(STATE["tmp"], "ref_returns_%s.py" % name)
            with open(p, "w") as f:
                f.write("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                        "    def forward(self, x, y):\n        return %s\n\n\n"
                        "def get_inputs():\n    return [torch.randn(8, 16), torch.randn(8, 16)]\n\n\n"
                        "def get_init_inputs():\n    return []\n" % ret)
            rows.append({"id": name, "reference": p})
        out = os.path.join(STATE["tmp"], "returns_results.jsonl")
        run_judge("check", "--problems", write_jobs("returns_jobs.jsonl", rows), "--out", out, "--device", "cpu",
                  "--runs", "1")
        by = {r["id"]: r for r in read_jsonl(out)}
        self.assertEqual(sorted(by), sorted(want))
        for name, r in by.items():
            self.assertTrue(r["ok"], r)
            self.assertEqual(r["returns_input"], want[name], r)

    def test_check_many(self):
        # One process checks them all; a hang or a dead process costs only its own problem.
        rows = [{"id": name, "reference": os.path.join(PROBLEMS, "ref_%s.py" % name)} for name, _ in BROKEN]
        rows.insert(3, {"id": "sound", "reference": d("ref_relu_matmul.py")})
        rows.append({"id": "small", "reference": d("ref_small_scale.py")})
        rows.append({"id": "missing", "reference": "no/such.py"})
        out = os.path.join(STATE["tmp"], "check_results.jsonl")
        t0 = time.time()
        summary = run_judge("check", "--problems", write_jobs("check_jobs.jsonl", rows), "--out", out, "--device", "cpu",
                            "--timeout", "5")
        rs = read_jsonl(out)
        self.assertEqual(sorted(r["id"] for r in rs), sorted(r["id"] for r in rows))
        by = {r["id"]: r for r in rs}
        for name, reason in BROKEN:
            self.assertFalse(by[name]["ok"], by[name])
            self.assertEqual(by[name]["reason"], reason, by[name])
            self.assertTrue(by[name]["diagnostic"].startswith("the problem's reference failed (%s)" % reason),
                            by[name]["diagnostic"])
        for name in ("sound", "small"):
            self.assertTrue(by[name]["ok"], by[name])
            self.assertGreater(by[name]["ref_ms"], 0)
        self.assertEqual(by["missing"]["reason"], "invalid", by["missing"])
        self.assertEqual(summary["counts"].get("ok"), 2, summary)
        self.assertLess(time.time() - t0, 90)

    def test_check_usage(self):
        p = subprocess.run([PY, JUDGE, "check", "--device", "cpu"], capture_output=True, text=True, timeout=120,
                           cwd=STATE["tmp"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--reference", p.stderr)


@unittest.skipIf(J is None, "torch not importable in this interpreter")
class TestCompareChunks(unittest.TestCase):
    def test_chunked_compare_matches_whole(self):
        # The same verdicts, counts and first indices with chunks of 7 elements as with one chunk.
        g = torch.Generator().manual_seed(0)
        ref = torch.randn(9, 13, generator=g)
        cases = {"equal": ref.clone(), "one off": ref.clone(), "nan": ref.clone(), "close": ref * (1 + 1e-5)}
        cases["one off"][5, 7] += 1.0
        cases["nan"][8, 12] = float("nan")
        ints = torch.randint(0, 5, (9, 13), generator=g)
        ints_off = ints.clone()
        ints_off[4, 4] += 1
        saved = J._CMP_CHUNK
        try:
            whole = {k: J.compare(ref, v, "magnitude", 1e-2, 1e-3) for k, v in cases.items()}
            whole["ints"] = J.compare(ints, ints_off, "magnitude", 1e-2, 1e-3)
            J._CMP_CHUNK = 7
            chunked = {k: J.compare(ref, v, "magnitude", 1e-2, 1e-3) for k, v in cases.items()}
            chunked["ints"] = J.compare(ints, ints_off, "magnitude", 1e-2, 1e-3)
        finally:
            J._CMP_CHUNK = saved
        self.assertEqual(whole, chunked)
        self.assertEqual([whole[k]["ok"] for k in ("equal", "one off", "nan", "close", "ints")],
                         [True, False, False, True, False])
        self.assertIn("first at index (5, 7)", whole["one off"]["detail"])
        self.assertEqual(whole["nan"]["cls"], "nan")
        self.assertIn("(8, 12)", whole["nan"]["detail"])
        self.assertIn("first at index (4, 4)", whole["ints"]["detail"])


if __name__ == "__main__":
    unittest.main()
