#!/usr/bin/env python3
"""Print the text of a PDF file, page by page."""
import argparse
import sys
from pathlib import Path


def page_range(spec, count):
    if not spec:
        return range(count)
    first, _, last = spec.partition("-")
    start = max(int(first) - 1, 0)
    end = min(int(last or first), count)
    return range(start, end)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file")
    parser.add_argument("--pages", default="")
    args = parser.parse_args()
    try:
        from pypdf import PdfReader
    except ImportError:
        sys.exit("pypdf is not installed: pip install pypdf")
    reader = PdfReader(Path(args.file))
    for i in page_range(args.pages, len(reader.pages)):
        if i:
            sys.stdout.write("\f")
        sys.stdout.write(reader.pages[i].extract_text() or "")
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
