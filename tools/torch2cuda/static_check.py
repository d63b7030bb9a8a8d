"""kiln torch2cuda static check: the facts of a candidate module, read from its syntax
tree without running it (standard library only; run as `python3 -I -S static_check.py
candidate.py` in the sandbox). Prints one JSON object:

    {"syntax_error": null | "file:line:col: SyntaxError: msg\\n    text",
     "builds": [{"call": "load_inline" | "load", "line": N, "as": "the callee as written"}],
     "imports_cpp_extension": bool,   # the module names torch.utils.cpp_extension at all
     "global_in_strings": bool,       # "__global__" in a string or bytes literal
     "global_in_text": bool}          # "__global__" anywhere (comments too)

A build call is a call whose callee resolves, through the module's imports and
assignments, to torch.utils.cpp_extension.load_inline or .load: `load_inline(...)`
after `from torch.utils.cpp_extension import load_inline [as x]` (or `import *`),
`ce.load_inline(...)` after `import torch.utils.cpp_extension as ce`,
`cpp_extension.load(...)` after `from torch.utils import cpp_extension`,
`torch.utils.cpp_extension.load_inline(...)` after `import torch [as th]`, a name
assigned one of those (`build = load_inline`), `functools.partial(load_inline, ...)`,
`getattr(ce, "load_inline")`, `importlib.import_module("torch.utils.cpp_extension")`
attributes assigned a builder (`self.build = load_inline`) and class attributes
(`build = staticmethod(load_inline)`, called as `self.build`). Resolution ignores scopes and order: a name that
is ever bound to a builder counts as one (never rejects a real builder; the judge's
run-time checks catch what this lets through).
"""
import ast
import json
import sys

CE = "torch.utils.cpp_extension"
BUILDERS = {CE + ".load_inline": "load_inline", CE + ".load": "load"}
PARTIAL = {"functools.partial"}
IMPORTERS = {"importlib.import_module"}


class Resolver:
    """Name -> the dotted paths it may be bound to (flow-insensitive)."""

    def __init__(self, tree):
        self.binds = {}
        self.assigns = []
        for node in ast.walk(tree):
            self._collect(node)
        # Assignments may chain (a = load_inline; b = a): iterate to a fixed point.
        for _ in range(len(self.assigns) + 1):
            changed = False
            for name, value in self.assigns:
                for path in self.paths(value):
                    if path not in self.binds.setdefault(name, set()):
                        self.binds[name].add(path)
                        changed = True
            if not changed:
                break

    def _bind(self, name, path):
        self.binds.setdefault(name, set()).add(path)

    def _collect(self, node):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self._bind(a.asname, a.name)
                else:
                    top = a.name.split(".")[0]
                    self._bind(top, top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name == "*":
                    if node.module == CE:
                        for full in BUILDERS:
                            self._bind(full.rsplit(".", 1)[1], full)
                    continue
                self._bind(a.asname or a.name, node.module + "." + a.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is None:
                return
            for t in targets:
                self.assigns.extend(_target_names(t, node.value))

    def paths(self, expr):
        """The dotted paths expr may evaluate to (empty when unknown)."""
        if isinstance(expr, ast.Name):
            return set(self.binds.get(expr.id, ()))
        if isinstance(expr, ast.Attribute):
            out = {p + "." + expr.attr for p in self.paths(expr.value)}
            key = _dotted(expr)
            if key:  # an attribute assigned a builder: self.build = load_inline
                out |= self.binds.get(key, set())
            # self.build where build is a class attribute bound to a builder
            out |= {p for p in self.binds.get(expr.attr, ()) if p in BUILDERS}
            return out
        if isinstance(expr, ast.Call):
            callee = self.paths(expr.func)
            if (callee & PARTIAL or _is_name(expr.func, "staticmethod")) and expr.args:
                return self.paths(expr.args[0])
            name = _str_arg(expr, 0)
            if callee & IMPORTERS and name:
                return {name}
            attr = _str_arg(expr, 1)
            if _is_name(expr.func, "getattr") and expr.args and attr:
                return {p + "." + attr for p in self.paths(expr.args[0])}
        return set()


def _is_name(expr, name):
    return isinstance(expr, ast.Name) and expr.id == name


def _str_arg(call, i):
    if len(call.args) > i and isinstance(call.args[i], ast.Constant) and isinstance(call.args[i].value, str):
        return call.args[i].value
    return None


def _dotted(expr):
    """"a.b.c" for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return ".".join([expr.id] + parts[::-1])


def _target_names(target, value):
    """(name, value) pairs an assignment binds; tuples pair up element by element."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, ast.Attribute) and _dotted(target):
        return [(_dotted(target), value)]
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) and \
            len(target.elts) == len(value.elts):
        out = []
        for t, v in zip(target.elts, value.elts):
            out.extend(_target_names(t, v))
        return out
    return []


def _syntax_error(e):
    msg = "%s:%s:%s: SyntaxError: %s" % (e.filename, e.lineno, e.offset, e.msg)
    if e.text:
        msg += "\n    " + e.text.rstrip()
    return msg


def facts(src, filename="candidate.py"):
    out = {"syntax_error": None, "builds": [], "imports_cpp_extension": CE in src or "cpp_extension" in src,
           "global_in_strings": False, "global_in_text": "__global__" in src}
    try:
        tree = ast.parse(src, filename)
    except SyntaxError as e:
        out["syntax_error"] = _syntax_error(e)
        return out
    except (ValueError, RecursionError, MemoryError) as e:  # null bytes, bad encoding, absurd nesting
        out["syntax_error"] = "%s: SyntaxError: %s: %s" % (filename, type(e).__name__, e)
        return out
    r = Resolver(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for path in sorted(r.paths(node.func)):
                if path in BUILDERS:
                    out["builds"].append({"call": BUILDERS[path], "line": node.lineno,
                                          "as": ast.get_source_segment(src, node.func) or ""})
                    break
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            if "__global__" in text:
                out["global_in_strings"] = True
    out["builds"].sort(key=lambda b: b["line"])
    return out


def main(argv):
    path = argv[1] if len(argv) > 1 else "candidate.py"
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        src = f.read()
    sys.stdout.write(json.dumps(facts(src, path)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
