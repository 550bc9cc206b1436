#!/usr/bin/env python3
"""Every source file of src/ and viewer/ is named in a CMakeLists.txt.

The modules list their files instead of globbing them: a file is in the
build because a CMakeLists.txt says so. This check finds each .cpp and .py
under src/ and viewer/ whose path, relative to the folder of a CMakeLists.txt
above it, no such CMakeLists.txt names, and each file(GLOB …) there.

    listed_sources.py ROOT     exit 1 with the files, else 0
"""
import os
import re
import sys


def main(root: str) -> int:
    problems = []
    for top in ("src", "viewer"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if name == "CMakeLists.txt":
                    text = open(os.path.join(folder, name), encoding="utf-8").read()
                    if re.search(r"file\s*\(\s*GLOB", text):
                        problems.append(f"{os.path.relpath(os.path.join(folder, name), root)}: globs its files")
                    continue
                if not name.endswith((".cpp", ".py")):
                    continue
                path = os.path.join(folder, name)
                if not named(root, path):
                    problems.append(f"{os.path.relpath(path, root)}: no CMakeLists.txt above it names it")
    for p in problems:
        print(p)
    return 1 if problems else 0


def named(root: str, path: str) -> bool:
    folder = os.path.dirname(path)
    while True:
        lists = os.path.join(folder, "CMakeLists.txt")
        if os.path.exists(lists):
            parts = os.path.relpath(path, folder).split(os.sep)
            text = open(lists, encoding="utf-8").read()
            # The path from there, or its tail (a list relative to a subfolder).
            for i in range(len(parts)):
                rel = "/".join(parts[i:])
                if re.search(r"(^|[\s/\"(])" + re.escape(rel) + r"($|[\s\")])", text, re.M):
                    return True
        if os.path.abspath(folder) == os.path.abspath(root):
            return False
        folder = os.path.dirname(folder)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
