#!/usr/bin/env python3
"""nvcc with its two independent halves at once (kiln's torch2cuda judge; issue 23).

    python3 nvcc_par.py NVCC ARGS...      # what load_inline's ninja runs, through PYTORCH_NVCC

nvcc compiles a .cu file in steps, one after another (`nvcc --dryrun` lists them): preprocess for
the device, preprocess for the host, cudafe++ (splits host from device code), cicc (device code
to PTX), ptxas, fatbinary, and the host compiler's pass, which includes the stub cicc wrote and
the fat binary. With torch's headers in the source, cudafe++, cicc and the host pass each take
several seconds, and the object is the critical path of a load_inline build.

This runs the very commands nvcc lists, in two lines at once:

    host:    host preprocessing -> cudafe++
    device:  device preprocessing -> cicc -> ptxas -> fatbinary
    then:    the host compiler's pass (it needs both)

nvcc orders cudafe++ before cicc for one reason: cudafe++ writes the module id (a name derived
from the source) and cicc reads it. Here cicc writes its own to a second file; the two are
compared before the host pass, and if they differ, the device line runs again with cudafe++'s id,
exactly as nvcc would have run it. The object is then the one nvcc makes (the GPU checks compare
them byte for byte: gpu/nvcc_par_check.py).

Compiler messages come out in nvcc's order: each step's output, up to the first step that failed,
whose exit status this exits with. Anything unexpected (a step it does not know, relocatable device
code, a dry run that fails) and nvcc runs itself, as asked. KILN_NVCC_PAR=0 turns this off;
KILN_NVCC_PAR_KEEP=DIR keeps the intermediate files in DIR (nvcc's --keep-dir).

It writes a record beside the object (OBJECT.kiln-nvcc.json): how it ran and how long it took.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# nvcc options whose compilations this does not split (nvcc runs them itself)
_OWN = {"-dc", "--device-c", "-rdc", "--relocatable-device-code", "-dlink", "--device-link", "-E", "--preprocess",
        "-M", "--generate-dependencies", "-MM", "-ptx", "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin",
        "--dryrun", "-dryrun", "--keep", "-keep", "--keep-dir", "-keep-dir", "--run", "-run", "-lib", "--lib",
        "-link", "--link", "--time", "-time", "-optix-ir", "--optix-ir", "-lto", "-dlto", "--save-temps", "-save-temps"}
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_DEPS = re.compile(r"^-- Filter Dependencies -- > (.+?)\s*$")


def _unquote(s):
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] == '"':
        return s[1:-1]
    return s


def eligible(args):
    if "-c" not in args and "--compile" not in args:
        return False
    if sum(1 for a in args if a in ("-o", "--output-file")) != 1:
        return False
    for a in args:
        if a in _OWN or a.split("=", 1)[0] in _OWN:
            return False
        if a.startswith(("-rdc=true", "--relocatable-device-code=true", "-Xnvlink")):
            return False
    return True


def output_of(args):
    for i, a in enumerate(args):
        if a in ("-o", "--output-file") and i + 1 < len(args):
            return args[i + 1]
    return None


def kind(step):
    """What a dry-run command is, by the program it runs."""
    try:
        prog = os.path.basename(shlex.split(step)[0])
    except ValueError:
        return "?"
    if prog == "cudafe++":
        return "cudafe"
    if prog == "cicc":
        return "cicc"
    if prog == "ptxas":
        return "ptxas"
    if prog == "fatbinary":
        return "fatbinary"
    if prog in ("gcc", "g++", "c++", "cc", "clang", "clang++") or prog.endswith(("-gcc", "-g++")) or re.match(r"^(gcc|g\+\+)-\d+$", prog):
        words = shlex.split(step)
        if "-E" in words:
            return "devpre" if any(w.startswith("-D__CUDA_ARCH__=") for w in words) else "hostpre"
        if "-c" in words:
            return "host"
    return "?"


def plan(lines):
    """The dry run's lines -> (env, steps [(kind, command)], depfile) in nvcc's order, or None when
    they are not the compilation this knows."""
    env, steps, depfile = {}, [], None
    for line in lines:
        m = _ASSIGN.match(line)
        if m and not steps:
            env[m.group(1)] = m.group(2).strip()
            continue
        d = _DEPS.match(line)
        if d:
            if depfile is not None:
                return None
            depfile = _unquote(d.group(1))
            continue
        k = kind(line)
        if k == "?":
            return None
        steps.append((k, line))
    kinds = [k for k, _ in steps]
    if kinds.count("cudafe") != 1 or kinds.count("hostpre") != 1 or kinds.count("host") != 1 or kinds.count("fatbinary") != 1:
        return None
    if kinds.count("cicc") < 1 or kinds.count("devpre") != kinds.count("cicc") or kinds[-1] != "host":
        return None
    cudafe = steps[kinds.index("cudafe")][1]
    mid = re.search(r'--gen_module_id_file --module_id_file_name ("[^"]+"|\S+)', cudafe)
    if not mid:
        return None
    for k, s in steps:
        if k == "cicc" and ("--module_id_file_name " + mid.group(1)) not in s:
            return None
        if k == "cicc" and "--gen_module_id_file" in s:
            return None
    if kinds.index("hostpre") > kinds.index("cudafe") or kinds.index("cudafe") > kinds.index("cicc"):
        return None
    return env, steps, depfile, mid.group(1)


class Step:
    def __init__(self, kind, cmd):
        self.kind, self.cmd = kind, cmd
        self.rc, self.out, self.err, self.ms = None, b"", b"", 0.0


def run_step(st, env, cwd):
    t0 = time.monotonic()
    p = subprocess.run(["/bin/sh", "-c", st.cmd], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    st.rc, st.out, st.err, st.ms = p.returncode, p.stdout, p.stderr, (time.monotonic() - t0) * 1e3
    return st.rc == 0


def run_line(steps, env, cwd):
    for st in steps:
        if not run_step(st, env, cwd):
            return


def real(nvcc, args):
    os.execv(nvcc, [nvcc] + args)


def record(obj, rec):
    if not obj:
        return
    try:
        with open(obj + ".kiln-nvcc.json", "w") as f:
            json.dump(rec, f)
    except OSError:
        pass


def main(argv):
    if len(argv) < 2:
        print("usage: nvcc_par.py NVCC ARGS...", file=sys.stderr)
        return 2
    nvcc, args = argv[0], argv[1:]
    if os.environ.get("KILN_NVCC_PAR", "1") == "0" or not eligible(args):
        real(nvcc, args)
    t0 = time.monotonic()
    obj = output_of(args)
    cwd = os.getcwd()
    keep_as = os.environ.get("KILN_NVCC_PAR_KEEP")  # keep the intermediate files there (nvcc's --keep-dir)
    if keep_as:
        os.makedirs(keep_as, exist_ok=True)
    keep = keep_as or tempfile.mkdtemp(prefix="kiln-nvcc-", dir=os.path.dirname(os.path.abspath(obj)) or None)
    try:
        dry = subprocess.run([nvcc] + args + ["--dryrun", "--keep", "--keep-dir", keep],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        got = plan([l[3:] for l in dry.stderr.splitlines() if l.startswith("#$ ")]) if dry.returncode == 0 else None
        if got is None:
            if not keep_as:
                shutil.rmtree(keep, ignore_errors=True)
            real(nvcc, args)
        env0, steps, depfile, mid_tok = got
        mid = _unquote(mid_tok)
        env = dict(os.environ)
        env.update(env0)
        all_steps = [Step(k, c) for k, c in steps]
        by = {}
        for st in all_steps:
            by.setdefault(st.kind, []).append(st)
        hostpre, cudafe, host = by["hostpre"][0], by["cudafe"][0], by["host"][0]
        if depfile is not None:
            # nvcc writes the dependencies as it preprocesses; here the host preprocessing writes them
            hostpre.cmd += " -MD -MF %s -MT %s" % (shlex.quote(depfile), shlex.quote(obj))
        mid2 = mid + ".cicc"
        dev = [st for st in all_steps if st.kind in ("devpre", "cicc", "ptxas", "fatbinary")]
        for st in dev:
            if st.kind == "cicc":
                st.cmd = st.cmd.replace("--module_id_file_name " + mid_tok,
                                        "--gen_module_id_file --module_id_file_name " + shlex.quote(mid2), 1)
        t = threading.Thread(target=run_line, args=(dev, env, cwd))
        t.start()
        run_line([hostpre, cudafe], env, cwd)
        t.join()
        rec = {"parallel": True, "ids_equal": None, "steps_ms": {}}
        front_ok = all(st.rc == 0 for st in [hostpre, cudafe] + dev)
        if front_ok:
            try:
                with open(mid, "rb") as f1, open(mid2, "rb") as f2:
                    rec["ids_equal"] = f1.read() == f2.read()
            except OSError:
                rec["ids_equal"] = False
            if not rec["ids_equal"]:
                # cicc's id is not cudafe++'s: the device line again, as nvcc runs it
                dev = [Step(k, c) for k, c in steps if k in ("devpre", "cicc", "ptxas", "fatbinary")]
                run_line(dev, env, cwd)
                by_k = {}
                for st in dev:
                    by_k.setdefault(st.kind, []).append(st)
                all_steps = [st for st in all_steps if st.kind not in ("devpre", "cicc", "ptxas", "fatbinary")]
                all_steps = _order(steps, all_steps + dev)
                front_ok = all(st.rc == 0 for st in dev)
            if front_ok:
                run_step(host, env, cwd)
        # nvcc's own order: each step's output up to the first that failed
        rc = 0
        for st in _order(steps, all_steps):
            if st.rc is None:
                break
            sys.stdout.buffer.write(st.out)
            sys.stderr.buffer.write(st.err)
            rec["steps_ms"][st.kind] = round(rec["steps_ms"].get(st.kind, 0) + st.ms, 1)
            if st.rc != 0:
                rc = st.rc if 0 < st.rc < 256 else 1
                break
        sys.stdout.flush()
        sys.stderr.flush()
        rec["rc"] = rc
        rec["ms"] = round((time.monotonic() - t0) * 1e3, 1)
        if rc == 0:
            record(obj, rec)
        return rc
    finally:
        if not keep_as:
            shutil.rmtree(keep, ignore_errors=True)


def _order(steps, objs):
    """objs (Step) in the order of steps' kinds as nvcc lists them."""
    pos = {}
    for i, (k, _) in enumerate(steps):
        pos.setdefault(k, []).append(i)
    seen, out = {}, []
    for st in objs:
        n = seen.get(st.kind, 0)
        seen[st.kind] = n + 1
        out.append((pos[st.kind][n] if n < len(pos[st.kind]) else len(steps), st))
    return [st for _, st in sorted(out, key=lambda x: x[0])]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
