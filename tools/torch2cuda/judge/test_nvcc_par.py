"""nvcc_par.py against a stand-in nvcc (no CUDA toolkit on the CPU host).

The stand-in lists its steps in nvcc's dry-run form and runs them one after another when asked to
compile, as nvcc does; its steps are small programs named like nvcc's (gcc, cudafe++, cicc, ptxas,
fatbinary) that pass files along as the real ones do (cudafe++ writes the module id, cicc reads it
or writes its own, the host pass includes the stub and the fat binary). The GPU host runs the same
comparisons against the real nvcc (gpu/nvcc_par_check.py).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PAR = os.path.join(HERE, "nvcc_par.py")

STEP = textwrap.dedent(r'''
    #!/usr/bin/env python3
    import hashlib, os, sys, time
    prog, a = os.path.basename(sys.argv[0]), sys.argv[1:]
    def opt(name):
        return a[a.index(name) + 1] if name in a else None
    def log(what):
        with open(os.environ["FAKE_LOG"], "a") as f:
            f.write("%s %s %.6f\n" % (prog + ("-E" if "-E" in a else ""), what, time.time()))
    def mod_id(src, salt=""):
        return "_" + hashlib.sha256((src + salt).encode()).hexdigest()[:8] + "_id"
    log("start")
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0.01")))
    if prog == "gcc" and "-E" in a:
        text = open(a[a.index("-o") - 1]).read()
        if "MISSING_HEADER" in text:
            sys.stderr.write("k.cu:1:10: fatal error: no_such_header.h: No such file or directory\n")
            sys.exit(1)
        dev = any(x.startswith("-D__CUDA_ARCH__=") for x in a)
        open(opt("-o"), "w").write(("device\n" if dev else "host\n") + text)
        if "-MF" in a:
            open(opt("-MF"), "w").write("%s: %s\n" % (opt("-MT"), a[a.index("-o") - 1]))
    elif prog == "cudafe++":
        text = open(a[-1]).read()
        if "HOST_ERROR" in text:
            sys.stderr.write('k.cu(2): error: expected a ";"\n')
            sys.exit(2)
        if "WARN" in text:
            sys.stderr.write('k.cu(1): warning #177-D: variable "unused" was declared but never referenced\n')
        if "--gen_module_id_file" in a:
            open(opt("--module_id_file_name"), "w").write(mod_id(opt("--orig_src_path_name")))
        open(opt("--gen_c_file_name"), "w").write("host code of %s\n#include \"%s\"\n" % (text.strip(), opt("--stub_file_name")))
    elif prog == "cicc":
        text = open(a[a.index("-o") - 1]).read()
        if "DEVICE_ERROR" in text:
            sys.stderr.write('k.cu(1): error: identifier "undefined_thing" is undefined\n')
            sys.exit(2)
        if "WARN" in text:
            sys.stderr.write('k.cu(1): warning #177-D: variable "unused" was declared but never referenced\n')
        mid = opt("--module_id_file_name")
        if "--gen_module_id_file" in a:
            open(mid, "w").write(mod_id(opt("--orig_src_path_name"), os.environ.get("FAKE_ID_SALT", "")))
        ident = open(mid).read()  # fails when cudafe++ has not written it
        open(opt("--stub_file_name"), "w").write("stub for %s\n" % ident)
        open(opt("-o"), "w").write("ptx of %s (%s)\n" % (text.strip(), ident))
    elif prog == "ptxas":
        open(opt("-o"), "w").write("cubin of " + open(a[-3]).read())
    elif prog == "fatbinary":
        open(a[-1].split("=", 1)[1], "w").write("fatbin\n")
    elif prog == "gcc" and "-c" in a:
        main = open(a[-3]).read()
        d = os.path.dirname(a[-3])
        out = main
        for line in main.splitlines():
            if line.startswith("#include"):
                out += open(os.path.join(d, line.split('"')[1])).read()
        out += open(os.path.join(d, "k.fatbin.c")).read()
        open(opt("-o"), "w").write(out)
    log("end")
''').lstrip()

NVCC = textwrap.dedent(r'''
    #!/usr/bin/env python3
    # A stand-in nvcc: its dry run in nvcc's form, or its steps one after another.
    import os, shlex, subprocess, sys
    a = sys.argv[1:]
    BIN = os.environ["FAKE_BIN"]
    keep = a[a.index("--keep-dir") + 1] if "--keep-dir" in a else os.environ["FAKE_TMP"]
    src = next(x for x in a if x.endswith(".cu"))
    obj = a[a.index("-o") + 1]
    k = lambda ext: '"%s"' % os.path.join(keep, "k" + ext)
    lines = ["_NVVM_BRANCH_=nvvm", "_SPACE_= ", "LIBRARIES=  \"-L/x/lib/stubs\" \"-L/x/lib\"", "CICC_PATH=" + BIN,
             "PATH=%s:%s" % (BIN, os.environ.get("PATH", ""))]
    steps = ['"%s"/gcc -D__CUDA_ARCH__=900 -E -x c++ "%s" -o %s' % (BIN, src, k(".cpp1.ii")),
             '"%s"/gcc -E -x c++ "%s" -o %s' % (BIN, src, k(".cpp4.ii"))]
    if "-MF" in a:
        steps.append("-- Filter Dependencies -- > " + a[a.index("-MF") + 1])
    if os.environ.get("FAKE_EXTRA_STEP"):
        steps.append('"%s"/nvlink --whatever' % BIN)
    steps += ['cudafe++ --orig_src_path_name "%s" --gen_c_file_name %s --stub_file_name "k.cudafe1.stub.c" '
              '--gen_module_id_file --module_id_file_name %s %s' % (src, k(".cudafe1.cpp"), k(".module_id"), k(".cpp4.ii")),
              '"$CICC_PATH/cicc" --orig_src_path_name "%s" -arch compute_90 --module_id_file_name %s --stub_file_name %s '
              '%s -o %s' % (src, k(".module_id"), k(".cudafe1.stub.c"), k(".cpp1.ii"), k(".ptx")),
              'ptxas -arch=sm_90 %s -o %s' % (k(".ptx"), k(".cubin")),
              'fatbinary --create=%s --embedded-fatbin=%s' % (k(".fatbin"), k(".fatbin.c")),
              '"%s"/gcc -c -x c++ %s -o "%s"' % (BIN, k(".cudafe1.cpp"), obj)]
    if "--dryrun" in a:
        for l in lines + steps:
            sys.stderr.write("#$ " + l + "\n")
        sys.exit(0)
    env = dict(os.environ)
    for l in lines:
        n, v = l.split("=", 1)
        env[n] = v.strip()
    for s in steps:
        if s.startswith("-- Filter Dependencies -- > "):
            open(s.split("> ", 1)[1], "w").write("%s: %s\n" % (obj, src))
            continue
        p = subprocess.run(["/bin/sh", "-c", s], env=env)
        if p.returncode:
            sys.exit(p.returncode)
''').lstrip()


class TestNvccPar(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="kiln-nvccpar-test-")
        self.bin = os.path.join(self.d, "bin")
        os.makedirs(self.bin)
        for name in ("gcc", "cudafe++", "cicc", "ptxas", "fatbinary"):
            p = os.path.join(self.bin, name)
            with open(p, "w") as f:
                f.write(STEP.replace("/usr/bin/env python3", sys.executable, 1))
            os.chmod(p, 0o755)
        self.nvcc = os.path.join(self.d, "nvcc")
        with open(self.nvcc, "w") as f:
            f.write(NVCC.replace("/usr/bin/env python3", sys.executable, 1))
        os.chmod(self.nvcc, 0o755)
        self.tmp = os.path.join(self.d, "tmp")
        os.makedirs(self.tmp)
        self.env = dict(os.environ, FAKE_BIN=self.bin, FAKE_TMP=self.tmp, FAKE_LOG=os.path.join(self.d, "log"),
                        PATH=self.bin + ":" + os.environ.get("PATH", ""))

    def tearDown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def compile(self, source, obj, par, extra_env=None, args=None):
        with open(os.path.join(self.d, "k.cu"), "w") as f:
            f.write(source)
        for n in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, n))
        env = dict(self.env, **(extra_env or {}))
        argv = args or ["-MD", "-MF", obj + ".d", "-c", os.path.join(self.d, "k.cu"), "-o", obj]
        cmd = ([sys.executable, "-I", PAR, self.nvcc] if par else [self.nvcc]) + argv
        open(env["FAKE_LOG"], "w").close()
        p = subprocess.run(cmd, cwd=self.d, env=env, capture_output=True, text=True)
        with open(env["FAKE_LOG"]) as f:
            log = [l.split() for l in f]
        return p, log

    def read(self, name):
        with open(os.path.join(self.d, name)) as f:
            return f.read()

    def test_same_object_steps_overlap(self):
        p1, _ = self.compile("kernel\n", "a.o", par=False)
        # each step takes 0.3 s here, so that the two lines' overlap shows through process start-up
        p2, log = self.compile("kernel\n", "b.o", par=True, extra_env={"FAKE_SLEEP": "0.3"})
        self.assertEqual((p1.returncode, p2.returncode), (0, 0), p2.stderr)
        self.assertEqual(self.read("a.o"), self.read("b.o"))
        self.assertIn("stub for _", self.read("b.o"))
        rec = json.loads(self.read("b.o.kiln-nvcc.json"))
        self.assertTrue(rec["parallel"])
        self.assertTrue(rec["ids_equal"])
        self.assertEqual(set(rec["steps_ms"]), {"devpre", "hostpre", "cudafe", "cicc", "ptxas", "fatbinary", "host"})
        # cicc ran while cudafe++ did: the two halves at once
        t = {(prog, what): float(ts) for prog, what, ts in log}
        self.assertLess(t[("cicc", "start")], t[("cudafe++", "end")])
        self.assertGreater(t[("gcc", "start")], max(t[("cudafe++", "end")], t[("fatbinary", "end")]))
        # the dependencies are written where nvcc writes them, for the object asked for
        self.assertTrue(self.read("b.o.d").startswith("b.o:"), self.read("b.o.d"))
        self.assertEqual(p1.stderr, p2.stderr)

    def test_messages_and_status_in_nvccs_order(self):
        for src in ("DEVICE_ERROR\n", "HOST_ERROR\n", "MISSING_HEADER\n", "WARN\n", "WARN DEVICE_ERROR\n"):
            with self.subTest(src=src.strip()):
                p1, _ = self.compile(src, "a.o", par=False)
                p2, _ = self.compile(src, "b.o", par=True)
                self.assertEqual(p1.returncode, p2.returncode)
                self.assertEqual(p1.stderr, p2.stderr)
                self.assertEqual(p1.stdout, p2.stdout)
                self.assertNotEqual(p1.stderr, "")
                self.assertEqual(os.path.exists(os.path.join(self.d, "b.o")), p1.returncode == 0)
                if p1.returncode:
                    self.assertFalse(os.path.exists(os.path.join(self.d, "b.o.kiln-nvcc.json")))
                for n in ("a.o", "b.o", "b.o.kiln-nvcc.json"):
                    if os.path.exists(os.path.join(self.d, n)):
                        os.unlink(os.path.join(self.d, n))

    def test_module_ids_differ(self):
        # cicc's own id is not cudafe++'s: the device line runs again with cudafe++'s id
        p1, _ = self.compile("kernel\n", "a.o", par=False)
        p2, log = self.compile("kernel\n", "b.o", par=True, extra_env={"FAKE_ID_SALT": "other"})
        self.assertEqual(p2.returncode, 0, p2.stderr)
        self.assertEqual(self.read("a.o"), self.read("b.o"))
        rec = json.loads(self.read("b.o.kiln-nvcc.json"))
        self.assertFalse(rec["ids_equal"])
        self.assertEqual(sum(1 for prog, what, _ in log if prog == "cicc" and what == "start"), 2)

    def test_unknown_steps_and_options_run_nvcc_itself(self):
        p1, _ = self.compile("kernel\n", "a.o", par=False, extra_env={"FAKE_EXTRA_STEP": "1"})
        self.assertNotEqual(p1.returncode, 0)  # the stand-in has no nvlink: nvcc's own failure
        p2, _ = self.compile("kernel\n", "b.o", par=True, extra_env={"FAKE_EXTRA_STEP": "1"})
        self.assertEqual(p1.returncode, p2.returncode)
        self.assertFalse(os.path.exists(os.path.join(self.d, "b.o.kiln-nvcc.json")))
        # relocatable device code, and nvcc_par turned off: nvcc as asked, one step after another
        p0, _ = self.compile("kernel\n", "a.o", par=False)
        self.assertEqual(p0.returncode, 0, p0.stderr)
        for extra, args in (({}, ["-dc", "-c", os.path.join(self.d, "k.cu"), "-o", "c.o"]),
                            ({"KILN_NVCC_PAR": "0"}, None)):
            p3, log = self.compile("kernel\n", "c.o", par=True, extra_env=extra, args=args)
            self.assertEqual(p3.returncode, 0, p3.stderr)
            self.assertEqual(self.read("c.o"), self.read("a.o"))
            self.assertFalse(os.path.exists(os.path.join(self.d, "c.o.kiln-nvcc.json")))
            order = [prog for prog, what, _ in log if what == "start"]
            self.assertEqual(order, ["gcc-E", "gcc-E", "cudafe++", "cicc", "ptxas", "fatbinary", "gcc"])

    def test_plan_reads_nvcc13_dry_run(self):
        # the dry run of nvcc 13.0 on the GPU host (a load_inline build), abridged
        sys.path.insert(0, HERE)
        import nvcc_par
        lines = [
            "_NVVM_BRANCH_=nvvm", "CICC_PATH=/usr/local/cuda/bin/../nvvm/bin",
            'LIBRARIES=  "-L/usr/local/cuda/bin/../targets/x86_64-linux/lib/stubs"',
            '"/opt/gcc/bin"/gcc -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_LIST__=900 -E -x c++ -fPIC "/b/cuda.cu" -o "/k/cuda.cpp1.ii"',
            '"/opt/gcc/bin"/gcc -std=c++17 -D__CUDA_ARCH_LIST__=900 -E -x c++ -fPIC "/b/cuda.cu" -o "/k/cuda.cpp4.ii"',
            "-- Filter Dependencies -- > cuda.cuda.o.d",
            'cudafe++ --c++17 --orig_src_path_name "/b/cuda.cu" --gen_c_file_name "/k/cuda.cudafe1.cpp" --stub_file_name '
            '"cuda.cudafe1.stub.c" --gen_module_id_file --module_id_file_name "/k/cuda.module_id" "/k/cuda.cpp4.ii"',
            '"$CICC_PATH/cicc" --c++17 -arch compute_90 --module_id_file_name "/k/cuda.module_id" --stub_file_name '
            '"/k/cuda.cudafe1.stub.c" "/k/cuda.cpp1.ii" -o "/k/cuda.ptx"',
            'ptxas -arch=sm_90 -m64  "/k/cuda.ptx"  -o "/k/cuda.cubin"',
            'fatbinary --create="/k/cuda.fatbin" -64 "--image3=kind=elf,sm=90,file=/k/cuda.cubin" --embedded-fatbin="/k/cuda.fatbin.c"',
            '"/opt/gcc/bin"/gcc -std=c++17 -c -x c++ -fPIC "/k/cuda.cudafe1.cpp" -o "/k/out.o"',
        ]
        env, steps, depfile, mid = nvcc_par.plan(lines)
        self.assertEqual([k for k, _ in steps], ["devpre", "hostpre", "cudafe", "cicc", "ptxas", "fatbinary", "host"])
        self.assertEqual(depfile, "cuda.cuda.o.d")
        self.assertEqual(mid, '"/k/cuda.module_id"')
        self.assertEqual(env["CICC_PATH"], "/usr/local/cuda/bin/../nvvm/bin")
        # a step it does not know, or cicc told to make its own id: nvcc runs itself
        self.assertIsNone(nvcc_par.plan(lines[:-1] + ['nvlink -o x "/k/out.o"', lines[-1]]))
        self.assertIsNone(nvcc_par.plan([l.replace("--module_id_file_name", "--gen_module_id_file --module_id_file_name")
                                         if "cicc" in l else l for l in lines]))


if __name__ == "__main__":
    unittest.main()
