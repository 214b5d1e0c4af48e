#!/usr/bin/env python3
"""Compare the hand-written Python tokenizer with CPython's tokenize module.

Reads `parsebench -pycounts` output on stdin: one line per file, its path, a tab,
and the strings (s<line>) and comments (c<line>) the hand-written tokenizer found.
Prints how many files agree exactly with CPython on where every string and
comment starts, and the files that differ.
"""
import io
import sys
import tokenize


def cpython(path):
    with open(path, "rb") as f:
        src = f.read()
    out = []
    for t in tokenize.tokenize(io.BytesIO(src).readline):
        if t.type == tokenize.STRING or t.type == getattr(tokenize, "FSTRING_START", -1):
            out.append("s%d" % t.start[0])
        elif t.type == tokenize.COMMENT:
            out.append("c%d" % t.start[0])
    return " ".join(out)


same = differ = failed = 0
for line in sys.stdin:
    path, _, ours = line.rstrip("\n").partition("\t")
    try:
        theirs = cpython(path)
    except (tokenize.TokenError, SyntaxError) as e:
        failed += 1
        print("cpython cannot tokenize", path, e)
        continue
    if ours == theirs:
        same += 1
    else:
        differ += 1
        a, b = ours.split(), theirs.split()
        first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        print("differs", path, "ours", a[first:first + 3], "cpython", b[first:first + 3])
print("files: %d identical string and comment starts, %d differ, %d CPython could not tokenize" % (same, differ, failed))
