#!/usr/bin/env python3
"""The layer check (scripts/check_layers.py) against small trees made here: it passes a tree that
keeps the rules and names each break of them (an include from a layer above, another layer's
private header, internals in the public API or an app, the standard library only in straggler, a
circle in the map, and through include/pacer/: a layer or a public header including the public
header of a layer above it, a public header that belongs to no layer). Usage: check_layer_rules.py SOURCE_ROOT."""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(sys.argv[1], "scripts"))
import check_layers  # noqa: E402

MAP = {
    "straggler": {"base": "src", "dirs": ["straggler"], "public": ["straggler/policy.h"],
                  "depends": []},
    "low": {"base": "src", "dirs": ["low"], "public": ["low/api.h"], "api": ["pacer/types.h"],
            "depends": ["straggler"]},
    "high": {"base": "src", "dirs": ["high"], "public": ["high/api.h"],
             "api": ["pacer/session.h"], "depends": ["low"]},
}

CLEAN = {
    "include/pacer/session.h": '#include "pacer/types.h"\n',
    "include/pacer/types.h": "",
    "src/straggler/policy.h": "#include <vector>\n",
    "src/low/api.h": '#include "straggler/policy.h"\n#include "pacer/types.h"\n',
    "src/low/inside.h": "",
    "src/low/api.cc": '#include "low/api.h"\n#include "low/inside.h"\n',
    "src/high/api.h": '#include "low/api.h"\n',
    "src/high/api.cc": '#include "high/api.h"\n#include "straggler/policy.h"\n',
    "apps/demo/main.cc": '#include "pacer/session.h"\n#include "helper.h"\n',
    "apps/demo/helper.h": "",
    "tests/unit/low_test.cc": '#include "low/inside.h"\n#include "high/api.h"\n',
}

# Each break, as (file, text) written over the clean tree, and what the check must say.
BREAKS = [
    ("src/low/api.cc", '#include "high/api.h"\n',
     'the low layer does not depend on the high layer (a layer above or beside it): '
     '"high/api.h"'),
    ("src/high/api.cc", '#include "low/inside.h"\n',
     '"low/inside.h" is private to the low layer (not among its public headers)'),
    ("include/pacer/session.h", '#include "low/api.h"\n',
     'the public API includes only pacer/ headers, not "low/api.h"'),
    ("apps/demo/main.cc", '#include "high/api.h"\n',
     'apps use only the public API (include/pacer/), not the high layer\'s "high/api.h"'),
    ("src/straggler/policy.h", '#include "pacer/types.h"\n',
     'the straggler layer is pure logic over the standard library: it includes no '
     '"pacer/types.h"'),
    ("src/low/inside.h", '#include "pacer/session.h"\n',
     'the low layer does not depend on the high layer (a layer above or beside it): '
     '"pacer/session.h"'),
    ("include/pacer/types.h", '#include "pacer/session.h"\n',
     'the low layer does not depend on the high layer (a layer above or beside it): '
     '"pacer/session.h"'),
    ("src/high/api.cc", '#include "pacer/unowned.h"\n',
     '"pacer/unowned.h" belongs to no layer (not among any layer\'s API_HEADERS)'),
    ("include/pacer/types.h", "#include <cstdint>\n#include <mpi.h>\n",
     "the public API includes only the C++ standard library and pacer/ headers, not <mpi.h>"),
    ("include/pacer/unowned.h", "",
     "belongs to no layer: list it under API_HEADERS of the layer that implements it "
     "(src/CMakeLists.txt)"),
]


def make_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


def check(files, layer_map):
    with tempfile.TemporaryDirectory() as root:
        make_tree(root, files)
        map_path = os.path.join(root, "layers.json")
        with open(map_path, "w") as f:
            json.dump(layer_map, f)
        return check_layers.check_tree(check_layers.load_layers(map_path), root)


def main():
    failures = []
    found = check(CLEAN, MAP)
    if found:
        failures.append(f"a clean tree was refused: {found}")
    for path, text, expected in BREAKS:
        found = check(dict(CLEAN, **{path: text}), MAP)
        if [(p, message) for p, _, message in found] != [(path, expected)]:
            failures.append(f"{path} including {text.strip()}: expected [{expected}], got {found}")
    circle = json.loads(json.dumps(MAP))
    circle["low"]["depends"].append("high")
    found = check(CLEAN, circle)
    if not any("in a circle: low -> high -> low" in message for _, _, message in found):
        failures.append(f"a circle in the map was not named: {found}")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(BREAKS) + 2 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
