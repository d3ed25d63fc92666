"""The size of what a fork copies (``core/`` and ``provider/``): code lines per module, without blank
lines, comments or docstrings, and next to another commit's with ``--at``.

    python benchmarks/core_lines.py                 # the checkout
    python benchmarks/core_lines.py --at 9900c66~1  # that commit, the checkout, and the change per module

A line counts as code when a token other than a comment or a docstring is on it (a statement split
over three lines is three). ``tests/runtime/test_fork.py`` prints the same table for the fork it makes.
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("core", "provider")  # what ``fork`` copies (minimal_runtime/fork.py)
KINDS = ("code", "comments", "docstrings", "blank", "total")


def line_counts(source: str) -> dict[str, int]:
    """Non-blank lines of one module's source: code, comments (whole-line), docstrings."""
    doc_lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                doc_lines.update(range(first.lineno, first.end_lineno + 1))
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    code_lines = {n for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skip
                  for n in range(t.start[0], t.end[0] + 1)} - doc_lines
    lines = source.splitlines()
    comments = {i for i, line in enumerate(lines, 1) if line.strip().startswith("#")} - code_lines - doc_lines
    return {"code": len(code_lines), "comments": len(comments), "docstrings": len(doc_lines),
            "blank": sum(1 for line in lines if not line.strip()), "total": len(lines)}


def modules(package: Path = ROOT / "minimal_runtime") -> dict[str, str]:
    """``core/agent.py``: its source, for every module a fork copies from ``package``."""
    return {f"{folder}/{path.name}": path.read_text() for folder in COPIED for path in sorted((package / folder).glob("*.py"))}


def modules_at(commit: str) -> dict[str, str]:
    """The same, as they were at ``commit`` of this repository."""
    listed = subprocess.run(["git", "ls-tree", "--name-only", commit, *(f"minimal_runtime/{f}/" for f in COPIED)],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return {path.removeprefix("minimal_runtime/"): subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        for path in sorted(listed) if path.endswith(".py")}


def line_report(package: Path = ROOT / "minimal_runtime") -> str:
    """One row per module of ``package``'s core/ and provider/, and their sum."""
    rows, total = [], dict.fromkeys(KINDS, 0)
    for name, source in modules(package).items():
        counts = line_counts(source)
        total = {k: total[k] + counts[k] for k in total}
        rows.append(f"  {name:<20} " + "  ".join(f"{k} {v:>4}" for k, v in counts.items()))
    return "\n".join(["what a fork copies (core/ + provider/):", *rows,
                      f"  {'all':<20} " + "  ".join(f"{k} {v:>4}" for k, v in total.items())])


def compare(before: dict[str, str], after: dict[str, str], label: str) -> str:
    """Code lines per module at ``label`` and now, and the change."""
    rows = [f"code lines (no blanks, comments, docstrings)   {label:>10}  {'now':>6}  {'change':>6}"]
    names = sorted(before.keys() | after.keys())
    for name in names:
        old = line_counts(before[name])["code"] if name in before else 0
        new = line_counts(after[name])["code"] if name in after else 0
        rows.append(f"  {name:<44} {old:>10}  {new:>6}  {new - old:>+6}")
    old, new = (sum(line_counts(s)["code"] for s in side.values()) for side in (before, after))
    rows.append(f"  {'all':<44} {old:>10}  {new:>6}  {new - old:>+6}")
    return "\n".join(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", help="a commit to compare the checkout with")
    args = parser.parse_args()
    print(compare(modules_at(args.at), modules(), args.at) if args.at else line_report())
