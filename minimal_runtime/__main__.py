"""Command line: ``python -m minimal_runtime demo [--turns N]``, ``replay PATH [--strategy S]``,
``serve [--port N] [--upstream URL] [--ui]``, ``view LOG.jsonl [--html RUN -o FILE]``, ``fork DEST [--name PKG]`` and
``experiment NN [--cap USD]``."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m minimal_runtime")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="the running example, call by call (offline unless ANTHROPIC_API_KEY is set)")
    demo.add_argument("--turns", type=positive, default=None, help="instead: a long synthetic run of N tool calls")
    rep = commands.add_parser("replay", help="replay a recorded run (serve --log, Claude Code, Cline, opencode/kilo, pi, "
                                             "Codex, mini-swe-agent, OpenHands) offline")
    rep.add_argument("path", help="a serve --log file, a Claude Code session .jsonl or stream-json log, a Cline task's "
                                  "api_conversation_history.json or CLI 3 <id>.messages.json, an opencode/kilo export, "
                                  "a pi session .jsonl, a codex exec --json log, a .traj.json, an OpenHands "
                                  "output.jsonl, or a folder (every file under it is read by its content, whatever "
                                  "its name)")
    rep.add_argument("--strategy", action="append", help="one of the strategies (repeatable; default: all)")
    rep.add_argument("--jobs", type=int, default=None, help="a folder: worker processes (default: one per core)")
    rep.add_argument("--csv", default=None, help="a folder: stream one row per run and strategy to this file; run "
                                                 "again with the same file to resume (the files in it are skipped)")
    rep.add_argument("--engine", choices=["processes", "dask"], default="processes",
                     help="a folder: worker processes here (default), or a Dask cluster (the dask extra)")
    rep.add_argument("--scheduler", default=None, metavar="ADDR",
                     help="with --engine dask: the scheduler's address (default: a LocalCluster of --jobs workers)")
    rep.add_argument("--model", default=None, help="price the replay as this model (default: the log's, if known)")
    rep.add_argument("--plot", default=None, help="where to write the plot (default: a new temporary file, printed; "
                                                  "'none' for no plot)")
    add_serve(commands)
    fork = commands.add_parser("fork", help="write core/ and provider/ as a package of your own (anthropic and pydantic "
                                            "only), with its README and a test")
    fork.add_argument("dest", help="the folder to write into (created if needed)")
    fork.add_argument("--name", default="agent", help="the package's name (default %(default)s)")
    view = commands.add_parser("view", help="serve --ui's page for a --log file, on loopback; with --html, a run as "
                                            "one file")
    view.add_argument("log", metavar="RUN", help="a log written by serve --log; with --html also a runtime record "
                                                 "(events.jsonl or its folder) or any log replay reads")
    view.add_argument("--html", action="store_true", help="write the page and the run as one HTML file (-o) that "
                                                          "opens with no server and no network")
    view.add_argument("-o", "--output", default=None, metavar="FILE.html", help="with --html: where (default run.html)")
    view.add_argument("--host", default="127.0.0.1", help="the address to listen on (default %(default)s: loopback)")
    view.add_argument("--port", type=port, default=8766, help="default %(default)s; 0 picks a free port")
    exp = commands.add_parser("experiment", help="a chapter's deciding experiment on a real model (ANTHROPIC_API_KEY): "
                                                 "the estimate first, never past --cap; without a key, the estimate only")
    exp.add_argument("chapter", help="the chapter's number, e.g. 08")
    exp.add_argument("--cap", type=float, default=1.0, help="dollars the real runs may spend at most (default %(default)s)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .example.demo import DemoFailed, run_demo
        try:
            run_demo(args.turns)
        except DemoFailed:
            raise SystemExit(1)  # the error and the way to run offline were printed
    elif args.command == "replay":
        replay_command(args)
    elif args.command == "serve":
        from .serve import main as serve_main
        serve_main(args)
    elif args.command == "fork":
        from .fork import main as fork_main
        fork_main(args)
    elif args.command == "view" and args.html:
        from .view.run_file import main as html_main
        html_main(args)
    elif args.command == "view":
        from .serve.page import view_main
        view_main(args)
    elif args.command == "experiment":
        from .example.experiment import main as experiment_main
        raise SystemExit(experiment_main(args.chapter, args.cap))


def bounded(low: int, high: int, what: str):
    """An argparse type: a whole number from ``low`` to ``high``, else its one-line usage error (not a
    socket's traceback for a port, nor ``demo --turns 0`` running the ordinary demo without a word)."""
    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            number = low - 1
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return number
    return parse


positive = bounded(1, 10**9, "a number of turns: 1 or more")
port = bounded(0, 65535, "a port: a number from 0 to 65535 (0: any free port)")


def add_serve(commands) -> None:
    from .serve import DEFAULT_PORT, bounds
    s = commands.add_parser("serve", help="the emulator on loopback for any client (Claude Code, SDKs, your agent), "
                                          "one line per call; or a recording proxy with --upstream", epilog=bounds())
    s.add_argument("--model", default="claude-sonnet-5-5",
                   help="the model a request naming one the table does not know is served as (default %(default)s); "
                        "a request naming a known model gets that model")
    s.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (default %(default)s: loopback, no token needed); any other "
                        "(0.0.0.0 for a workshop room) needs a room token: --room-token, or one generated and printed")
    s.add_argument("--room-token", default=None, metavar="TOKEN",
                   help="every request must carry it (header x-room-token, or the API key 'TOKEN:...'), else a 401; "
                        "required beyond loopback (generated if not given), optional on it")
    s.add_argument("--attendee", action="append", default=[], metavar="KEY=NAME",
                   help="name the attendee whose API key is KEY (repeatable); else a request's metadata.user_id, "
                        "else key- and a short hash of its key. The key is never printed or logged")
    s.add_argument("--port", type=port, default=DEFAULT_PORT, help="default %(default)s; 0 picks a free port")
    s.add_argument("--account-created", default=None, metavar="YYYY-MM-DD",
                   help="the emulated account's creation date: from 2026-08-31 the prefix check is enforced "
                        "(default: 2026-11-30)")
    s.add_argument("--policy", default="tool-then-answer", metavar="tool-then-answer|module:callable",
                   help="what the emulated model answers (SIMULATED); default: call one offered tool with a "
                        "schema-valid input per round, then end the turn: by a terminal tool it is offered (submit, "
                        "finish, final answer, attempt completion, exit), else in the format the prompt asks (a JSON "
                        "schema, dspy's fields), else in text")
    s.add_argument("--tool-rounds", type=int, default=2, help="tool calls per user turn before the default policy "
                                                               "answers (default %(default)s)")
    s.add_argument("--script", default=None, metavar="FILE.jsonl",
                   help='answer from a JSONL of turns instead; a line {"error": {"status": 529}} answers its call '
                        "with that error")
    s.add_argument("--faults", default=None, metavar="429:0.1,529:0.05,500:0.01",
                   help="answer a share of the requests with these errors (retry-after included), to test a "
                        "client's retries; drawn from a seeded generator, so a run repeats")
    s.add_argument("--fault-seed", type=int, default=0, help="the seed of --faults (default %(default)s)")
    s.add_argument("--thread-ttl", type=float, default=None, metavar="SECONDS",
                   help="message threads expire this long after their last response (default 300, the API's "
                        "5 minutes); shorten it to test a client's replay after a lost thread")
    s.add_argument("--log", default=None, metavar="FILE.jsonl",
                   help="append every request and answer as a JSON line (headers not known to be safe written as [redacted])")
    s.add_argument("--batch-delay", type=float, default=0.0, metavar="SECONDS",
                   help="Message Batches: seconds from create until a batch has ended, its requests sent in waves "
                        "spread over them (default 0: at once, the first poll sees it ended; over 86400 the rest "
                        "expire at 24 h)")
    s.add_argument("--ui", action="store_true",
                   help="also serve a page at /ui on the same port: the conversations, their calls, each call's "
                        "prompt in cache regions, where a prefix broke; it updates as the run goes on")
    s.add_argument("--upstream", default=None, metavar="URL",
                   help="a recording proxy: forward to this Messages API server with the client's own key, and "
                        "report its usage next to the emulator's prediction")


def replay_command(args) -> None:
    import warnings
    from .provider.models import UnknownModelWarning
    with warnings.catch_warnings():  # an unpriced model is said once, in one line (``unpriced``), not as a warning
        warnings.simplefilter("ignore", UnknownModelWarning)
        _replay_command(args)


def unpriced(model: str | None) -> str | None:
    """One line for a model the price table does not know: its costs are unknown, and how to price it."""
    from .replay.pricing import priced
    if priced(model):  # the table's, a retired model's own, DeepSeek's (replay/pricing.py)
        return None
    return (f"note: {model or 'the model'} is not in the price table, so its costs are n/a; to price the replay as a "
            "known model, give --model (e.g. --model claude-sonnet-4-6)")


def _replay_command(args) -> None:
    import sys
    import tempfile
    from pathlib import Path
    from .replay import STRATEGIES, TrajectoryError, plot, replay_all, runs as read_runs, table
    names = args.strategy or list(STRATEGIES)
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise SystemExit(f"unknown strategy {', '.join(unknown)}; known: {', '.join(STRATEGIES)}")
    if Path(args.path).expanduser().is_dir():
        return replay_folder_command(args, names)
    folder_only = [f"--{o}" for o in ("csv", "jobs", "scheduler") if getattr(args, o) is not None] + \
        ["--engine"] * (args.engine != "processes")
    if folder_only:
        print(f"note: {', '.join(folder_only)} {'is' if len(folder_only) == 1 else 'are'} for a folder; "
              f"{args.path} is one file, replayed here", file=sys.stderr)
    if args.plot and args.plot != "none" and not Path(args.plot).expanduser().parent.is_dir():  # before the work
        raise SystemExit(f"replay: cannot write the plot {args.plot}: no folder {Path(args.plot).expanduser().parent}")
    def each_run():  # one run at a time: a file of many appended sessions is never held whole
        try:
            yield from read_runs(Path(args.path).expanduser())
        except TrajectoryError as e:
            raise SystemExit(f"cannot import: {e}")
        except OSError as e:  # unreadable: permissions, a device, ...
            raise SystemExit(f"cannot import: {args.path}: {e.strerror or e}")

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty() and (done % 10 == 0 or done == total):
            print(f"\r  {done}/{total} calls", end="" if done < total else "\n", file=sys.stderr, flush=True)

    stopped = []
    for k, run in enumerate(each_run()):
        why = unpriced(args.model or run.model)
        if why:
            print(why, file=sys.stderr)
        def announced(name: str):
            if sys.stderr.isatty():
                print(f"{name}:", file=sys.stderr)
            return progress
        results = replay_all(run, names, model=args.model, progress=announced)  # one calibration for all
        print(table(run, results) + "\n")
        if args.plot != "none":
            if args.plot:
                target = args.plot if k == 0 else f"{Path(args.plot).with_suffix('')}-{k + 1}.png"
                target += "" if Path(target).suffix else ".png"  # what matplotlib writes to, so printed as such
            else:
                target = tempfile.NamedTemporaryFile(prefix="replay-", suffix=".png", delete=False).name
            try:
                plot(run, results, target)  # a figure of its own, not pyplot's: nothing to close
            except (OSError, ValueError) as e:  # a folder of that name, no permission, a suffix matplotlib does
                # not write (the table above is printed)
                raise SystemExit(f"replay: cannot write the plot {target}: {getattr(e, 'strerror', None) or e}")
            print(f"plot: {target}")
        stopped += [r for r in results if r.crashed or not r.finished and len(names) == 1]
    if stopped:  # the replay itself broke, or the one strategy asked for could not run: said by the status
        raise SystemExit(1)


def replay_folder_command(args, names: list[str]) -> None:
    import sys
    from pathlib import Path
    from .replay.folder import find_logs, folder_table, run_folder
    directory = Path(args.path).expanduser().resolve()  # rows name each file by its resolved path (resume matches it)
    paths = find_logs(directory)
    if not paths:
        raise SystemExit(f"cannot import: {directory}: no files under it")
    if args.jobs is not None and args.jobs < 1:
        raise SystemExit("--jobs must be 1 or more")
    if args.scheduler and args.engine != "dask":
        raise SystemExit("--scheduler is for --engine dask")
    if args.csv:  # opened for appending as the replay will (an empty file is a fresh one): said now, not at the end
        try:
            open(Path(args.csv).expanduser(), "a").close()
        except OSError as e:
            raise SystemExit(f"replay: cannot write the --csv {args.csv}: {e.strerror or e}")
    totals = run_folder(paths, names, args.model, args.jobs, Path(args.csv).expanduser() if args.csv else None,
                        progress=sys.stderr.isatty(), engine=args.engine, scheduler=args.scheduler)
    print(folder_table(directory, totals))
    if args.csv:
        print(f"csv: {args.csv} (a row per run and strategy, one per file not replayed; rerun with it to resume)")
    if not totals.runs:
        raise SystemExit(f"nothing under {directory} was replayed ({len(totals.refused)} files, each listed above)")
    if len(names) == 1 and any(a["not_finished"] for a in totals.aggregate() if a["strategy"] == names[0]):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
