#!/usr/bin/env python3
"""Checks that every #include in the tree follows the layers of ../shared/DESIGN.md.

The layers and their public headers come from the map the build writes (build/layers.json, made
by cmake/PacerLayers.cmake from src/CMakeLists.txt). The rules:
  - a layer includes its own headers, and the public headers of the layers it depends on
    (directly or through them): never a header of a layer above it or beside it, never another
    layer's private header;
  - the layers' dependencies form no cycle;
  - the public API includes nothing of MPI, UCX, protobuf, CUDA or torch: its system includes
    are the C++ standard library's;
  - every include/pacer/ header (the public API) belongs to the layer that implements it (its
    API_HEADERS), and is held to that layer's rules: it includes only include/pacer/ headers, its
    own layer's or those of the layers below; a layer includes the include/pacer/ headers of its
    own and of the layers below it, never one of a layer above it or beside it; the straggler
    layer includes none (it is pure logic over the standard library);
  - apps/ include only include/pacer/ and their own headers;
  - tests/ may include anything: they test the layers' insides.

Usage: check_layers.py LAYERS_JSON SOURCE_ROOT. Prints each violation (file, line, the rule) and
exits 1 if there is any.
"""

import json
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
# A system include; the public API's may name only the C++ standard library (no '.', no '/').
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>')
SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh")
# Generated files a layer's public headers include, and the layer they belong to.
GENERATED = {"meta.pb.h": "transport"}
PURE_LAYERS = {"straggler"}


class Layer:
    def __init__(self, name, spec):
        self.name = name
        self.base = spec["base"]
        self.dirs = spec["dirs"]
        self.public = set(spec["public"])
        self.depends = spec["depends"]
        self.api = set(spec.get("api", []))

    def owns_spelling(self, spelled):
        return any(spelled.startswith(d + "/") for d in self.dirs)

    def owns_path(self, path):
        return any(path.startswith(os.path.join(self.base, d) + "/") for d in self.dirs)


def load_layers(path):
    with open(path) as f:
        return {name: Layer(name, spec) for name, spec in json.load(f).items()}


def find_cycle(layers):
    """A list of layer names that depend on each other in a circle, or None."""
    state, trail = {}, []

    def visit(name):
        state[name] = "open"
        trail.append(name)
        for dep in layers[name].depends:
            if dep not in layers:
                continue
            if state.get(dep) == "open":
                return trail[trail.index(dep):] + [dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        trail.pop()
        state[name] = "done"
        return None

    for name in layers:
        if name not in state:
            cycle = visit(name)
            if cycle:
                return cycle
    return None


def below(layers, name):
    """Every layer `name` depends on, directly or through others."""
    seen, todo = set(), list(layers[name].depends)
    while todo:
        dep = todo.pop()
        if dep in seen or dep not in layers:
            continue
        seen.add(dep)
        todo.extend(layers[dep].depends)
    return seen


def owner_of_spelling(layers, spelled):
    if spelled in GENERATED:
        return GENERATED[spelled]
    for layer in layers.values():
        if layer.owns_spelling(spelled):
            return layer.name
    return None


def owner_of_api(layers, spelled):
    """The layer that implements include/`spelled` (a "pacer/..." spelling), or None."""
    for layer in layers.values():
        if spelled in layer.api:
            return layer.name
    return None


def is_public(layers, owner, spelled):
    return spelled in GENERATED or spelled in layers[owner].public


def check_api_include(layers, includer, allowed, spelled, rel, number, violations):
    """The rule for a layer's (or its API header's) include of include/`spelled`."""
    owner = owner_of_api(layers, spelled)
    if owner is None:
        violations.append((rel, number, f"\"{spelled}\" belongs to no layer (not among any "
                           f"layer's API_HEADERS)"))
    elif owner != includer and owner not in allowed:
        violations.append((rel, number, f"the {includer} layer does not depend on the {owner} "
                           f"layer (a layer above or beside it): \"{spelled}\""))


def check_file(layers, root, path, violations):
    """Appends (path, line number, message) for each include of `path` that breaks a rule."""
    rel = os.path.relpath(path, root)
    includer = None
    for layer in layers.values():
        if layer.owns_path(rel):
            includer = layer.name
    category = ("public API" if rel.startswith("include/pacer/") else
                "app" if rel.startswith("apps/") else
                "test" if rel.startswith("tests/") else None)
    if category == "public API":
        includer = owner_of_api(layers, os.path.relpath(rel, "include"))
        if includer is None:
            violations.append((rel, 0, "belongs to no layer: list it under API_HEADERS of the "
                               "layer that implements it (src/CMakeLists.txt)"))
            return
    if includer is None and category in (None, "test"):
        return
    allowed = below(layers, includer) if includer else set()
    with open(path, errors="replace") as f:
        for number, line in enumerate(f, 1):
            system = SYSTEM_INCLUDE.match(line)
            if system and category == "public API" and re.search(r"[./]", system.group(1)):
                violations.append((rel, number, f"the public API includes only the C++ standard "
                                   f"library and pacer/ headers, not <{system.group(1)}>"))
            m = INCLUDE.match(line)
            if not m:
                continue
            spelled = m.group(1)
            if spelled.startswith("pacer/"):
                if includer in PURE_LAYERS:
                    violations.append((rel, number, f"the {includer} layer is pure logic over "
                                       f"the standard library: it includes no \"{spelled}\""))
                elif includer is not None:
                    check_api_include(layers, includer, allowed, spelled, rel, number, violations)
                continue
            owner = owner_of_spelling(layers, spelled)
            if owner is None and os.path.exists(os.path.join(os.path.dirname(path), spelled)):
                continue  # a file beside it (an app's or a test's own header)
            if category == "public API":
                violations.append((rel, number, f"the public API includes only pacer/ headers, "
                                   f"not \"{spelled}\""))
            elif category == "app":
                if owner is not None:
                    violations.append((rel, number, f"apps use only the public API "
                                       f"(include/pacer/), not the {owner} layer's "
                                       f"\"{spelled}\""))
            elif owner is None or owner == includer:
                continue
            elif owner not in allowed:
                violations.append((rel, number, f"the {includer} layer does not depend on the "
                                   f"{owner} layer (a layer above or beside it): \"{spelled}\""))
            elif not is_public(layers, owner, spelled):
                violations.append((rel, number, f"\"{spelled}\" is private to the {owner} layer "
                                   f"(not among its public headers)"))


def check_tree(layers, root):
    """Every violation in the tree under `root`, as (path, line, message), sorted."""
    violations = []
    cycle = find_cycle(layers)
    if cycle:
        violations.append(("layers.json", 0, "the layers depend on each other in a circle: " +
                           " -> ".join(cycle)))
    for top in ("include", "src", "cuda", "apps", "tests"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith(SOURCE_SUFFIXES):
                    check_file(layers, root, os.path.join(directory, name), violations)
    return sorted(violations)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[0])
        print("usage: check_layers.py LAYERS_JSON SOURCE_ROOT")
        return 2
    layers = load_layers(argv[1])
    violations = check_tree(layers, argv[2])
    for path, line, message in violations:
        print(f"{path}:{line}: {message}")
    if violations:
        print(f"{len(violations)} include(s) break the layers of ../shared/DESIGN.md")
        return 1
    print(f"layers: {len(layers)} layers, every include follows them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
