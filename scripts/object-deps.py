#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Which object uses which, from the globals nm says they define and use.

    scripts/object-deps.py [--exclude GLOB]... PATH...

Each PATH is an object file, a directory searched for *.o files, or
@FILE, a file that lists objects one a line (what a build links).  Object
A uses object B when A refers to a global that B defines.  Prints one line
per object ("a.o -> b.o c.o", paths relative to the common directory),
then every cycle found, one per strongly connected set of objects
("cycle: a.o -> b.o -> a.o").  Exits 1 if there is a cycle, 2 on a usage
or nm error, 0 otherwise.  A layered design has no cycle: an object can
be understood, tested and linked with only those below it.
"""

import argparse
import fnmatch
import os
import subprocess
import sys


def objects_of(paths, excludes):
    found = []
    for path in paths:
        if path.startswith("@"):
            with open(path[1:]) as f:
                found += [line.strip() for line in f if line.strip()]
        elif os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                found += [os.path.join(root, f) for f in sorted(files)
                          if f.endswith(".o")]
        elif os.path.isfile(path):
            found.append(path)
        else:
            raise OSError("%s: no such file or directory" % path)
    return [f for f in found
            if not any(fnmatch.fnmatch(f, g) for g in excludes)]


def symbols(obj):
    """The globals @obj defines and the ones it uses."""
    out = subprocess.run(["nm", "-P", "-g", obj], check=True,
                         capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        # U: undefined; w/v: weak, undefined when there is no value
        if kind == "U" or (kind in "wv" and len(fields) < 3):
            used.add(name)
        else:
            defined.add(name)
    return defined, used


def graph(objs):
    syms = {o: symbols(o) for o in objs}
    definers = {}
    for o in objs:
        for name in syms[o][0]:
            definers.setdefault(name, []).append(o)
    edges = {o: set() for o in objs}
    for o in objs:
        for name in syms[o][1]:
            edges[o].update(d for d in definers.get(name, ()) if d != o)
    return edges


def strong_sets(edges):
    """Tarjan's strongly connected sets, iteratively (no recursion
    limit), each as a sorted list."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
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
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    members.append(m)
                    if m == node:
                        break
                result.append(sorted(members))
    return result


def a_cycle(edges, members):
    """One cycle through the first of @members, staying among them:
    the shortest way back to it (breadth first)."""
    inside = set(members)
    start = members[0]
    came_from = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(edges[node] & inside):
            if nxt == start:
                path = [node]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                return list(reversed(path)) + [start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return [start]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="PATH",
                    help="object files, directories of them, or @FILE")
    ap.add_argument("--exclude", action="append", default=[],
                    metavar="GLOB", help="leave out objects matching GLOB")
    args = ap.parse_args()
    try:
        objs = objects_of(args.paths, args.exclude)
        edges = graph(objs)
    except (OSError, subprocess.CalledProcessError) as e:
        print("object-deps: %s" % e, file=sys.stderr)
        return 2
    if not objs:
        print("object-deps: no objects in %s" % " ".join(args.paths),
              file=sys.stderr)
        return 2
    base = os.path.commonpath([os.path.dirname(os.path.abspath(o))
                               for o in objs])

    def rel(o):
        return os.path.relpath(os.path.abspath(o), base)

    for o in sorted(objs, key=rel):
        print("%s -> %s" % (rel(o), " ".join(sorted(rel(d)
                                                   for d in edges[o]))))
    cycles = [s for s in strong_sets(edges) if len(s) > 1]
    for members in sorted(cycles, key=lambda s: rel(s[0])):
        members = sorted(members, key=rel)
        print("cycle: %s" % " -> ".join(rel(o) for o in
                                        a_cycle(edges, members)))
        print("  among: %s" % " ".join(rel(o) for o in members))
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
