#!/usr/bin/env python3
"""No function of the product is longer than 100 lines (docs/architecture.md).

Reads the C++ and CUDA sources of src/, viewer/, workloads/ and kernels/ as
text: comments, string and character literals (raw strings included) are
blanked, then every brace is matched. A brace opens a function body when it
follows a parameter list (`) {`, `) const {`, `) -> T {`, ...) at namespace
or class scope; the function's length is the lines from the one holding its
opening brace to the one holding its closing brace. Lambdas and blocks inside
a function count towards it. Prints each function over the limit with its
file and line and fails if there is one; with --list N, prints the N longest.
"""
import os
import re
import sys

LIMIT = 100
ROOTS = ("src", "viewer", "workloads", "kernels")
EXTS = (".cpp", ".cc", ".h", ".hpp", ".cu", ".cuh")


def blank(text):
    """The text with comments and literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator (1'000)
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


HEAD_FUNCTION = re.compile(r"\)\s*(const|noexcept|override|final|mutable|->\s*[\w:<>,\s\*&]+|\s)*$")
HEAD_SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def functions(path):
    """(first line, last line, name) of each function body at namespace or class scope."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    stack = []  # kinds of the open braces: "scope", "function", "block"
    found = []
    head_start = 0  # where the text before the next brace begins
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c in ";":
            head_start = i + 1
        elif c == "{":
            head = text[head_start:i]
            inside = any(k[0] != "scope" for k in stack)
            if inside:
                kind = "block"
            elif HEAD_FUNCTION.search(head) and "=" not in head.split("(")[0]:
                kind = "function"
                name = re.findall(r"([~\w:]+)\s*\(", head)
                stack.append(("function", line, name[0] if name else "?"))
                head_start = i + 1
                continue
            elif HEAD_SCOPE.search(head) or "extern" in head:
                kind = "scope"
            else:
                kind = "block"
            stack.append((kind, line, ""))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, first, name = stack.pop()
                if kind == "function":
                    found.append((first, line, name))
            head_start = i + 1
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "."
    most = int(sys.argv[sys.argv.index("--list") + 1]) if "--list" in sys.argv else 0
    rows = []
    for top in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(EXTS):
                    path = os.path.join(dirpath, name)
                    for first, last, fn in functions(path):
                        rows.append((last - first + 1, os.path.relpath(path, root), first, fn))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    if most:
        for r in rows[:most]:
            print("%4d lines  %s:%d  %s" % r)
        return 0
    long = [r for r in rows if r[0] > LIMIT]
    for r in long:
        print("%s:%d: %s is %d lines (the limit is %d): split it" % (r[1], r[2], r[3], r[0], LIMIT))
    print("%d functions read, %d over %d lines" % (len(rows), len(long), LIMIT))
    return 1 if long or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
