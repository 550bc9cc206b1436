#!/usr/bin/env python3
"""Each file's index matches its body (docs/architecture.md, "File indexes").

A file that opens with an index — comment lines `// [SECTION] Title` before
its first line of code — has exactly those sections in its body, in that
order, as `// [SECTION] Title ----` lines. An index entry may add a
description in parentheses after the title ("Title (what it holds)"). A file
with sections in its body and no index is fine; an index without its
sections is not.
"""
import os
import re
import sys

LINE = re.compile(r"^//\s*\[SECTION\]\s*(.*?)\s*-*\s*$")


def sections(path):
    index, body, head = [], [], True
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if head and line.strip() and not line.startswith("//"):
                head = False
            m = LINE.match(line)
            if m:
                (index if head else body).append(m.group(1))
    return index, body


def same(entry, title):
    return entry == title or entry.startswith(title + " (")


def main(root):
    bad = 0
    checked = 0
    for top in ("src", "viewer", "tests", "bench"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".h", ".cu")):
                    continue
                path = os.path.join(dirpath, name)
                index, body = sections(path)
                if not index:
                    continue
                checked += 1
                if len(index) != len(body) or not all(same(e, t) for e, t in zip(index, body)):
                    bad += 1
                    print(f"{os.path.relpath(path, root)}: index {index} but body sections {body}")
    if checked == 0:
        print("no file has an index: nothing checked")
        return 1
    print(f"{checked} indexed files, {bad} whose index differs from the body")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
