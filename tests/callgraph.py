#!/usr/bin/env python3
"""tests/callgraph.py - who calls whom, from the built objects, against declared layers.

    callgraph.py [--show] SPEC BUILDDIR [SRCDIR]

SPEC (tests/callgraph.conf) declares, per library, the layers of its files:

    library libnvmeof_initiator_la        # the objects' prefix, as automake names them
    layer 0 queue initiator/lib/queue/    # LAYER NAME PATH-PREFIX...; longest prefix wins
    layer 1 nvme initiator/lib/nvme/
    layer 1 scsi initiator/lib/scsi/
    layer 2 ctrlr initiator/lib/

A call (an undefined symbol of one object that another object of the same library
defines) may go to a lower layer or stay inside its own group; a call to a higher
layer, or sideways to another group of the same layer, is reported with the symbols.
Circles (strongly connected files) are listed; one of more than MAX_CIRCLE files fails.
--show prints every edge.

    apart PREFIX-A PREFIX-B               # e.g. the initiator's library and the target's

No global symbol may be defined both by a library whose name starts with PREFIX-A and by
one starting with PREFIX-B: two functions of one name in two sides are one link away
from calling the wrong one. Exit status 0 when everything holds.
"""
import collections
import os
import subprocess
import sys

MAX_CIRCLE = 8


def parse_spec(path):
    libs, apart = [], []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if line[0] == "library" and len(line) == 2:
            libs.append({"name": line[1], "layers": []})
        elif line[0] == "layer" and len(line) >= 4 and libs:
            libs[-1]["layers"].append((int(line[1]), line[2], line[3:]))
        elif line[0] == "apart" and len(line) == 3:
            apart.append((line[1], line[2]))
        else:
            sys.exit(f"{path}:{n}: expected 'library NAME', 'layer N GROUP PREFIX...' "
                     "or 'apart PREFIX-A PREFIX-B'")
    return libs, apart


def defined_by_prefix(builddir, prefix, srcdir=None):
    """Global symbols defined by the PIC objects of libraries named PREFIX*."""
    out = {}
    for d, _, fs in os.walk(builddir):
        if os.path.basename(d) != ".libs":
            continue
        for f in fs:
            lib = f.split("_la-", 1)[0] + "_la" if "_la-" in f else None
            rel = os.path.relpath(os.path.dirname(d), builddir)
            src = os.path.join(rel, f.split("_la-", 1)[-1][:-2] + ".c")
            if srcdir and not os.path.exists(os.path.join(srcdir, src)):
                continue
            if lib and lib.startswith(prefix) and f.endswith(".o"):
                for s in symbols(os.path.join(d, f))[0]:
                    out.setdefault(s, f"{lib} ({f.split('_la-', 1)[1][:-2]}.c)")
    return out


def check_apart(builddir, a, b, srcdir=None):
    da, db = defined_by_prefix(builddir, a, srcdir), defined_by_prefix(builddir, b, srcdir)
    both = sorted(set(da) & set(db))
    for s in both:
        print(f"{s} is defined twice: by {da[s]} and by {db[s]}")
    print(f"{a}* and {b}*: {len(da)} and {len(db)} symbols, "
          f"{len(both)} in common{'' if not both else ' (rename one side)'}")
    return not both


def objects(builddir, lib, srcdir=None):
    """source path -> object path, for the library's PIC objects (or plain ones); with
    @srcdir, only those whose source still exists (a build tree keeps the objects of
    files that moved or went away)."""
    out = {}
    pre = lib + "-"
    for o in (os.path.join(d, f) for d, _, fs in os.walk(builddir) for f in fs):
        base = os.path.basename(o)
        if not base.startswith(pre) or not base.endswith(".o"):
            continue
        d = os.path.relpath(os.path.dirname(o), builddir)
        if os.path.basename(d) == ".libs":
            d = os.path.dirname(d)
        src = os.path.normpath(os.path.join(d, base[len(pre):-2] + ".c"))
        if srcdir and not os.path.exists(os.path.join(srcdir, src)):
            continue
        if src not in out or "/.libs/" in o:
            out[src] = o
    return out


def symbols(obj):
    defined, used = set(), set()
    nm = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRC":
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used.add(f[1])
    return defined, used


def layer_of(src, layers):
    best = None
    for lvl, group, prefixes in layers:
        for p in prefixes:
            if src.startswith(p) and (best is None or len(p) > len(best[2])):
                best = (lvl, group, p)
    return best


def circles(nodes, edges):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, onstack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        onstack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    onstack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in onstack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def check(lib, builddir, show, srcdir=None):
    objs = objects(builddir, lib["name"], srcdir)
    if not objs:
        print(f"{lib['name']}: no objects under {builddir} (build first)")
        return False
    defs, uses = {}, {}
    for src, o in objs.items():
        defs[src], uses[src] = symbols(o)
    owner = {s: f for f, ds in defs.items() for s in ds}
    edges = collections.defaultdict(set)
    calls = collections.defaultdict(list)
    for f, us in uses.items():
        for s in sorted(us):
            t = owner.get(s)
            if t and t != f:
                edges[f].add(t)
                calls[(f, t)].append(s)
    ok = True
    where = {f: layer_of(f, lib["layers"]) for f in objs}
    for f in sorted(objs):
        if where[f] is None:
            print(f"{f}: in no layer of {lib['name']} (add it to the spec)")
            ok = False
    for (f, t), syms in sorted(calls.items()):
        if show:
            print(f"  {f} -> {t}: {' '.join(syms)}")
        a, b = where[f], where[t]
        if a is None or b is None or b[0] < a[0] or b[1] == a[1]:
            continue
        how = "up" if b[0] > a[0] else "sideways"
        print(f"{f} calls {how} into {t} ({b[1]}, layer {b[0]} from {a[1]}, layer {a[0]}): "
              f"{' '.join(syms)}")
        ok = False
    circ = circles(set(objs), edges)
    for c in circ:
        big = len(c) > MAX_CIRCLE
        print(f"{lib['name']}: circle of {len(c)} files{' (over ' + str(MAX_CIRCLE) + ')' if big else ''}: "
              f"{' '.join(c)}")
        ok = ok and not big
    print(f"{lib['name']}: {len(objs)} files, {sum(len(e) for e in edges.values())} file-to-file "
          f"calls, {len(circ)} circles, largest {max([len(c) for c in circ] or [0])}: "
          f"{'layers kept' if ok else 'LAYERS BROKEN'}")
    return ok


def main(argv):
    show = "--show" in argv
    argv = [a for a in argv if a != "--show"]
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    srcdir = argv[2] if len(argv) == 3 else None
    ok = True
    libs, apart = parse_spec(argv[0])
    for lib in libs:
        ok = check(lib, argv[1], show, srcdir) and ok
    for a, b in apart:
        ok = check_apart(argv[1], a, b, srcdir) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
