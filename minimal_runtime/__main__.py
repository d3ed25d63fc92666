"""Command line: ``python -m minimal_runtime demo [--turns N]``."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m minimal_runtime")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="the running example, call by call (offline unless ANTHROPIC_API_KEY is set)")
    demo.add_argument("--turns", type=int, default=None, help="instead: a long synthetic run of N tool calls")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo
        run_demo(args.turns)


if __name__ == "__main__":
    main()
