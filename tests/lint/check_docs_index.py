#!/usr/bin/env python3
"""docs/index.md is the map of the documentation: it links every page under docs/, and every
relative link of a page under docs/ (and of README.md) names a file that exists.

Usage: check_docs_index.py SOURCE_DIR   (ctest `docs.index`; exit 1 with one line per problem)
"""
import pathlib
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s#]+)(#[^)]*)?\)")


def main(argv):
    root = pathlib.Path(argv[1]).resolve()
    docs = root / "docs"
    pages = sorted(p for p in docs.rglob("*.md") if p.name != "index.md")
    index = docs / "index.md"
    problems = []
    linked = set()
    for text_file in [index, root / "README.md", *pages]:
        for target, _ in LINK.findall(text_file.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            path = (text_file.parent / target).resolve()
            if not path.exists():
                problems.append(f"{text_file.relative_to(root)}: link to {target}: no such file")
            elif text_file == index:
                linked.add(path)
    for page in pages:
        if page.resolve() not in linked:
            problems.append(f"docs/index.md: does not link {page.relative_to(root)}")
    for p in problems:
        print(f"docs.index: FAIL: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"docs.index: ok ({len(pages)} pages linked from docs/index.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
