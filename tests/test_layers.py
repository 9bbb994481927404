"""The layer map of ``../shared/DESIGN.md``, checked mechanically.

Every module of ``src/zerax`` is parsed with ``ast``; every import of a zerax module,
inside functions too, is mapped to the layer of the importing and the imported module.
The test fails on:

- an import that runs up a layer (a lower layer importing a higher one),
- an import of a zerax module inside a function (a hidden edge of the import graph),
- a cycle among modules (also within one layer),
- a backend importing a transform (``interpreters``),
- framework code (``zerax.nn``'s layers, ``optim``, ``data``, ``train``, ``io``, ...)
  importing ``zerax._src``.

The one import by name is the backend registry's (``backends/__init__.py`` loads
``backends/<name>/`` on first use: a compiler is a slow import, and an optional backend
may be missing); any other dynamic import of a zerax module fails the test too.

``KNOWN`` lists the violations that remain while the restructuring of issue 12 is under
way: a ratchet.  A new violation fails, and so does a listed one that is gone (delete it
from the list).  Run ``python tests/test_layers.py`` for the report and the counts.
"""

from __future__ import annotations

import ast
import collections
import os
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src")

# Bottom to top.  A module may import its own layer and the layers below.
LAYERS = ["base", "core", "ir", "interpreters", "ops", "backends", "lax", "numpy", "api",
          "face", "framework"]
_SRC_LAYERS = {"base", "core", "ir", "interpreters", "ops", "backends", "lax", "numpy",
               "api"}
# Public faces hold re-exports (and the small public helpers of JAX's faces).  The
# framework packages are built on the public API only: ``zerax.nn`` (JAX's ``jax.nn``
# activations and initialisers, and Equinox's API) included.
_FRAMEWORK = ("zerax.nn", "zerax.optim", "zerax.data", "zerax.train", "zerax.io",
              "zerax.example_libraries", "zerax.experimental")


def layer_of(mod: str) -> str:
    if mod == "zerax.errors":
        return "base"
    if mod.startswith("zerax._src."):
        top = mod.split(".")[2]
        if top in _SRC_LAYERS:
            return top
        raise AssertionError(f"{mod}: not in a layer package of zerax._src")
    if mod == "zerax._src":
        return "base"
    if any(mod == p or mod.startswith(p + ".") for p in _FRAMEWORK):
        return "framework"
    return "face"


def _modules() -> dict[str, tuple[str, bool]]:
    mods = {}
    root = os.path.join(SRC, "zerax")
    for dirpath, _, files in os.walk(root):
        if "__pycache__" in dirpath:
            continue
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                name = os.path.relpath(path, SRC)[:-3].replace(os.sep, ".")
                is_pkg = name.endswith(".__init__")
                mods[name[:-9] if is_pkg else name] = (path, is_pkg)
    return mods


def _type_checking_block(node, parents) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports() -> list[tuple[str, str, int, bool]]:
    """(importer, imported, line, inside_a_function) for every import of a zerax module."""
    mods = _modules()
    out = []
    for name, (path, is_pkg) in sorted(mods.items()):
        tree = ast.parse(open(path, encoding="utf-8").read())
        parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        package = name if is_pkg else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if _type_checking_block(node, parents):
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in mods else base)
            inside = False
            p = node
            while p in parents:
                p = parents[p]
                if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    inside = True
                    break
            for t in targets:
                if not t.startswith("zerax"):
                    continue
                while t not in mods and "." in t:
                    t = t.rpartition(".")[0]
                if t != name:
                    out.append((name, t, node.lineno, inside))
    return out


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
    return comps


def violations() -> set[str]:
    found = set()
    edges = collections.defaultdict(set)
    for src, dst, line, inside in imports():
        ls, ld = layer_of(src), layer_of(dst)
        where = f"{src} -> {dst}"
        if inside:
            found.add(f"in-function import: {where}")
        else:
            edges[src].add(dst)
        # a package's __init__ importing its own submodules is how a package is built
        own_package = dst.startswith(src + ".")
        if LAYERS.index(ld) > LAYERS.index(ls) and not own_package:
            found.add(f"upward import ({ls} -> {ld}): {where}")
        if ls == "backends" and ld == "interpreters":
            found.add(f"backend imports a transform: {where}")
        if ls == "framework" and dst.startswith("zerax._src"):
            found.add(f"framework imports zerax._src: {where}")
    for name, (path, _) in _modules().items():
        text = open(path, encoding="utf-8").read()
        for call in ast.walk(ast.parse(text)):
            if isinstance(call, ast.Call) and (
                    ast.unparse(call.func) in ("importlib.import_module", "__import__")) and \
                    name != "zerax._src.backends" and "zerax" in ast.unparse(call):
                found.add(f"dynamic import: {name}: {ast.unparse(call)}")
    # Importing a package runs its __init__: the faces' ``import zerax.x`` edges to the
    # root package are how Python works, not a design choice, so cycles are taken over
    # zerax._src only and the framework/face edges are checked by layer alone.
    src_edges = {k: {d for d in v if d.startswith("zerax._src")}
                 for k, v in edges.items() if k.startswith("zerax._src")}
    for comp in _cycles(src_edges):
        found.add("cycle: " + " <-> ".join(comp))
    return found


KNOWN: set[str] = set()


def test_layers_import_one_way():
    found = violations()
    new = sorted(found - KNOWN)
    gone = sorted(KNOWN - found)
    msg = []
    if new:
        msg.append("new layer violations (fix them; see DESIGN.md's layer map):\n  "
                   + "\n  ".join(new))
    if gone:
        msg.append("fixed violations still listed in KNOWN (delete them):\n  "
                   + "\n  ".join(gone))
    assert not msg, "\n".join(msg)


def report() -> None:
    imps = imports()
    found = violations()
    mods = _modules()
    kinds = collections.Counter(v.split(":")[0].split(" (")[0] for v in found)
    print(f"modules: {len(mods)}; zerax imports: {len(imps)}; "
          f"in functions: {sum(1 for i in imps if i[3])}")
    cyc = [v for v in found if v.startswith("cycle")]
    print(f"cycles: {len(cyc)}, modules in them: "
          f"{sum(len(c.split(' <-> ')) for c in cyc)}")
    biggest = max(mods, key=lambda m: sum(1 for _ in open(mods[m][0])))
    print(f"largest module: {biggest} ({sum(1 for _ in open(mods[biggest][0]))} lines)")
    for k, n in kinds.most_common():
        print(f"  {k}: {n}")
    if "-v" in sys.argv:
        for v in sorted(found):
            print(v)


def write_known() -> None:
    """Rewrite ``KNOWN`` as the violations found now (after fixing some: review the
    diff, it must only shrink)."""
    path = os.path.abspath(__file__)
    text = open(path, encoding="utf-8").read()
    start = text.index("KNOWN: set[str] = ")
    end = text.index("\n\n\ndef test_layers_import_one_way")
    body = "".join(f"    {v!r},\n" for v in sorted(violations()))
    new = "KNOWN: set[str] = {\n" + body + "}" if body else "KNOWN: set[str] = set()"
    open(path, "w", encoding="utf-8").write(text[:start] + new + text[end:])


if __name__ == "__main__":
    if "--write-known" in sys.argv:
        write_known()
    report()


def test_only_the_backends_import_numba():
    """The seam of the compiler (issue 28): Numba is imported under ``_src/backends/``
    only (the special functions' kernels reach it through the compiler the backends
    install, ``base.special.install_vectorizer``)."""
    found = []
    root = os.path.join(SRC, "zerax")
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                if any(n == "numba" or n.startswith("numba.") for n in names) and \
                        not rel.startswith("_src/backends/"):
                    found.append(f"{rel}:{node.lineno}")
    assert not found, f"Numba imported outside _src/backends/: {found}"
