#!/usr/bin/env python3
r"""Doxygen's filter for the headers that include option tables (docs/Doxyfile, FILTER_PATTERNS).

Config and TransportTuning get their fields by including an X-macro table inside the struct
(#include "pacer/config_options.def"). Doxygen does not paste included files, so it would show
none of the options. This filter replaces such an #include line with one documented field per
PACER_OPTION(type, name, default, agreement, check, help) row:

  /** help \details Flag `--name`, environment `PACER_NAME`; ... */ type name = default;

The table stays the one place an option is written; the reference is made from it. All fields go
on the #include's own line, so Doxygen's line numbers for the rest of the header stay right.
Every other line passes through unchanged.

Usage (as Doxygen runs it): expand_options.py HEADER
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+\.def)"\s*$')


def split_arguments(text):
    """The top-level, comma-separated arguments of a macro call's text (after its '(')."""
    args, current, depth, i = [], [], 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':  # a string literal, escapes included
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            current.append(text[i : j + 1])
            i = j + 1
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            if depth == 0:
                args.append("".join(current).strip())
                return args, i + 1
            depth -= 1
        elif c == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
            i += 1
            continue
        current.append(c)
        i += 1
    raise ValueError("unterminated PACER_OPTION(")


def string_value(literals):
    """The text of adjacent C string literals ("a " "b" -> a b)."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', literals)
    return "".join(re.sub(r"\\(.)", r"\1", p) for p in parts)


def doc_text(text):
    """Plain text made safe for a Doxygen comment: no commands, HTML or en dashes by accident."""
    text = text.replace("*/", "* /")
    return re.sub(r"([\\@&$#<>%]|--)", r"\\\1", text)


def rows(def_path):
    with open(def_path, encoding="utf-8") as f:
        text = "".join(line for line in f if not line.lstrip().startswith("//"))
    pos = 0
    while True:
        start = text.find("PACER_OPTION(", pos)
        if start < 0:
            return
        args, used = split_arguments(text[start + len("PACER_OPTION(") :])
        pos = start + len("PACER_OPTION(") + used
        if len(args) != 6:
            raise ValueError(f"{def_path}: a PACER_OPTION row with {len(args)} arguments: {args}")
        yield args


def field(type_, name, default, agreement, check, help_):
    agreement = (
        "the same on every rank (Session refuses a job whose ranks differ)"
        if agreement == "kJobWide"
        else "may differ between ranks"
    )
    valid = "" if check == "Any()" else f" Valid: `{check}`."
    # The declaration shows the type, name and default; \details ends the summary (the help's
    # first sentence) even where the help does not end with a full stop.
    doc = (
        f"{doc_text(string_value(help_))} \\details Flag `--{name}`, environment "
        f"`PACER_{name.upper()}`; {agreement}.{valid}"
    )
    return f"/** {doc} */ {type_} {name} = {default};"


def expand(line, root):
    m = INCLUDE.match(line)
    if not m:
        return line
    try:
        return " ".join(field(*args) for args in rows(os.path.join(root, m.group(1)))) + "\n"
    except (OSError, ValueError, IndexError) as e:
        # Doxygen ignores a filter's exit status: an undocumented field makes it fail instead.
        print(f"expand_options.py: {e}", file=sys.stderr)
        return "int option_table_unreadable_see_expand_options;\n"


def main():
    header = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(header)))  # include/ of pacer/x.h
    with open(header, encoding="utf-8") as f:
        sys.stdout.write("".join(expand(line, root) for line in f))


if __name__ == "__main__":
    main()
