"""kiln torch2cuda problem static check: the facts of a synthesised problem module, read
from its syntax tree without running it (standard library only; run as
`python3 -I -S problem_check.py problem.py` in the sandbox). Prints one JSON object:

    {"syntax_error": null | "line:col: SyntaxError: msg",
     "model": bool,             # a top-level `class Model(...)` whose bases name Module
     "forward": bool,           # Model defines forward
     "init": bool,              # Model defines __init__
     "get_inputs": bool,        # a top-level `def get_inputs()`
     "get_init_inputs": bool,   # a top-level `def get_init_inputs()`
     "model_new": bool,         # it also defines ModelNew (an answer, not a problem)
     "imports": ["torch", ...], # top-level names of every import
     "banned": ["open(", ...]}  # constructs a problem has no use for (I/O, processes, eval)

A problem may import only torch (and its submodules), math, numbers and typing;
everything else is listed in "banned" together with calls of open, eval, exec,
compile, __import__, input, breakpoint and attributes of os, sys, subprocess.
"""
import ast
import json
import sys

ALLOWED_IMPORTS = {"torch", "math", "numbers", "typing", "__future__"}
BANNED_CALLS = {"open", "eval", "exec", "compile", "__import__", "input", "breakpoint", "globals", "setattr", "delattr"}
BANNED_MODULES = {"os", "sys", "subprocess", "socket", "ctypes", "importlib", "shutil", "pickle", "time", "random",
                  "threading", "multiprocessing", "builtins", "inspect", "gc"}


def facts(src):
    out = {"syntax_error": None, "model": False, "forward": False, "init": False, "get_inputs": False,
           "get_init_inputs": False, "model_new": False, "imports": [], "banned": []}
    try:
        tree = ast.parse(src, "problem.py")
    except SyntaxError as e:
        out["syntax_error"] = "%s:%s: SyntaxError: %s" % (e.lineno, e.offset, e.msg)
        return out
    banned = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            out["model"] = any("Module" in ast.dump(b) for b in node.bases)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out["forward"] = out["forward"] or item.name == "forward"
                    out["init"] = out["init"] or item.name == "__init__"
        elif isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            out["model_new"] = True
        elif isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
            out[node.name] = True
    imports = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                imports.add(a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            imports.add((node.module or "").split(".")[0] if node.level == 0 else ".")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BANNED_CALLS:
            banned.append(node.func.id + "(")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in BANNED_MODULES:
            banned.append(node.value.id + "." + node.attr)
    out["imports"] = sorted(imports)
    banned += ["import " + m for m in sorted(imports - ALLOWED_IMPORTS)]
    out["banned"] = sorted(set(banned))
    return out


def main():
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        src = f.read()
    json.dump(facts(src), sys.stdout)


if __name__ == "__main__":
    main()
