#!/usr/bin/env python3
"""Moves citations of docs/design.md sections when the design's sections move.

Code, tests, scripts and docs cite the design as `docs/design.md §N.M` (or, in a file that named it
already, as a bare `§N.M`). When a section is split, moved or dropped, the table RULES below says
where its citations go, and this script rewrites them in every tracked file (git ls-files) except
docs/design.md itself, whose own references are written by hand. It is idempotent: a rule only
matches the exact old number (`§4` does not match `§4.4`), so it can be re-run after merging a
branch that still cites the old numbers. tests/style/design_refs_test.sh fails on any citation
of a section the design lacks; run this, then the test.

Usage: scripts/dev/renumber_design_refs.py [--dry-run] [SOURCE_DIR]
"""

import argparse
import os
import re
import subprocess
import sys

# (old, new, where): a citation of §old becomes §new on every line that matches the regular
# expression `where` (None: every line). The first rule that matches a citation wins, so put the
# narrower rules first. `new` may also be a note, e.g. "docs/notes/cost-model.md", which replaces
# the `§old` (and a `docs/design.md ` just before it).
RULES = [
    # 2026-12, issue 41: §4 (identity and partitioning, one 276-line section) split into §4.1-§4.6.
    # A citation of §4 as a whole stays §4; one whose line says what it is about moves.
    ("4", "4.5", r"partitioned form|shard files?|save-parts|lockstep-parts"),
    ("4", "4.4", r"partitioned load|[Ll]oading by partition|by partition|LoadPartition|"
                 r"worker's partition|\bshares?\b|\braw\b|[Rr]eceiving|[Rr]anking|[Aa]ssembly|"
                 r"vertex table|holds the whole graph|From a base|edge rounds?|vertex rounds?"),
    ("4", "4.2", r"directory's files|read as one|form a graph's input|an input's form|"
                 r"resolved in one place|name the file"),
    ("4", "4.1", r"UUID|global id\b|global identity|vertex id space"),
]

# A `§` this close after the name of another document is that document's (RFC 4122 §4.3).
FOREIGN = re.compile(r"\b(?:RFC|FIPS|SIGMOD|spec(?:ification)?\b|et al\.)")
CITATION = r"(docs/design\.md )?§{old}(?![\d.]*\d)(?![a-z])"
# The design writes its own references; the two notes that keep its earlier full text quote it as
# it was.
SKIP = {"docs/design.md", "docs/notes/architecture.md", "docs/notes/protocol-commit-failure.md",
        "scripts/dev/renumber_design_refs.py"}


def tracked_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                         capture_output=True).stdout
    return [f for f in out.decode().split("\0") if f and f not in SKIP]


def rewrite_line(line, compiled):
    """Returns the line with every citation a rule matches moved."""
    for old, new, where in compiled:
        if where is not None and not where.search(line):
            continue
        pattern = re.compile(CITATION.format(old=re.escape(old)))

        def move(m):
            before = line[max(0, m.start() - 40):m.start()]
            if FOREIGN.search(before):
                return m.group(0)
            if new.startswith("docs/"):
                return new
            return (m.group(1) or "") + "§" + new

        line = pattern.sub(move, line)
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
    parser.add_argument("source_dir", nargs="?", default=".")
    args = parser.parse_args()

    compiled = [(old, new, re.compile(where) if where else None) for old, new, where in RULES]
    changed = 0
    for name in tracked_files(args.source_dir):
        path = os.path.join(args.source_dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue  # binary files, submodules, files deleted in the work tree
        if "§" not in text:
            continue
        lines = text.split("\n")
        out = []
        for number, line in enumerate(lines, 1):
            moved = rewrite_line(line, compiled)
            if moved != line:
                changed += 1
                print(f"{name}:{number}: {moved.strip()}")
            out.append(moved)
        if not args.dry_run and out != lines:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(out))
    print(f"{changed} line(s) {'would change' if args.dry_run else 'changed'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
