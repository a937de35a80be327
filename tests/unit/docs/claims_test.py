#!/usr/bin/python3
"""README.md and docs/ say only what is true of the code (issue 32):

- Every sentence that calls a feature unbuilt ("not built", "being built", "not yet", ...)
  is listed in CLAIMS with a probe: a command that shows the feature is still missing. When
  someone builds it, the probe stops failing and this test names the sentence to fix. A new
  such sentence without a probe fails too.
- Every relative link in README.md and docs/*.md names a file that exists, and an anchor
  (#...) names a heading of that file (GitHub's slugs).
- README.md stays a page for operators: at most 120 lines.

  claims_test.py BIN_DIR SOURCE_DIR"""
import pathlib
import re
import subprocess
import sys

UNBUILT = re.compile(r"\b(not built|being built|not yet|is planned|will be added|coming soon|TODO)\b",
                     re.IGNORECASE)

# (file, words of the sentence, probe argv with {bin}, what the probe's output must contain
# while the feature is missing). A probe of None: the sentence is about the docs themselves.
CLAIMS = [
    ("docs/architecture.md", "where a part is not built yet it says so", None, None),
    ("docs/topology.md", "Not yet: `gdrbench sweep --mode cover`",
     ["{bin}/gdrbench", "sweep", "--mode", "cover", "--agents", "a:7070", "--dry-run"],
     "--mode: expected"),
]


def fail(msg):
    print("FAIL:", msg)
    return 1


def docs(src):
    return [src / "README.md"] + sorted((src / "docs").glob("*.md"))


def check_claims(bin_dir, src):
    fails = 0
    for path in docs(src):
        rel = str(path.relative_to(src))
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not UNBUILT.search(line):
                continue
            claim = next((c for c in CLAIMS if c[0] == rel and c[1] in line), None)
            if claim is None:
                fails += fail(f"{rel}:{n} calls something unbuilt: '{line.strip()}'. If it is built, "
                              "fix the sentence; if not, add it to CLAIMS in this test with a probe")
                continue
            if claim[2] is None:
                print(f"ok: {rel}:{n}: about the docs themselves")
                continue
            argv = [a.format(bin=bin_dir) for a in claim[2]]
            out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            if out.returncode != 0 and claim[3] in out.stdout + out.stderr:
                print(f"ok: {rel}:{n}: still unbuilt ({' '.join(argv[1:])}: exit {out.returncode})")
            else:
                fails += fail(f"{rel}:{n} says '{claim[1]}' but `{' '.join(argv[1:])}` now works "
                              f"(exit {out.returncode}): fix the docs and this CLAIMS entry")
    return fails


def slug(heading):
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    found = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def check_links(src):
    fails = checked = 0
    for path in docs(src):
        rel = str(path.relative_to(src))
        in_code = False
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                file, _, anchor = target.partition("#")
                dest = (path.parent / file).resolve() if file else path
                checked += 1
                if not dest.exists():
                    fails += fail(f"{rel}:{n}: link to {target}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    fails += fail(f"{rel}:{n}: link to {target}: no heading with that anchor")
    print(f"ok: {checked} relative links checked")
    return fails


def main():
    bin_dir, src = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    fails = check_claims(bin_dir, src) + check_links(src)
    n = len((src / "README.md").read_text().splitlines())
    if n > 120:
        fails += fail(f"README.md has {n} lines: at most 120 (the rest belongs in docs/)")
    else:
        print(f"ok: README.md has {n} lines")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
