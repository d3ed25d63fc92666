"""The real-client suite runs only when asked (``make interop``, or ``INTEROP=1 pytest tests/interop``):
it installs clients from the registries and takes minutes, so plain ``pytest`` does not collect it."""

from __future__ import annotations

import json
import os
import sys

if os.environ.get("INTEROP") != "1":
    collect_ignore_glob = ["*"]


def pytest_terminal_summary(terminalreporter):
    if os.environ.get("INTEROP") != "1":
        return
    from .harness import summary_table, what_clients_send
    plain = sys.modules.get("tests.interop.test_default_policy")
    if plain is not None and getattr(plain, "RESULTS", None):
        terminalreporter.write_line("")
        terminalreporter.write_line("against plain serve (its default policy, SIMULATED): loops that end by a tool or a format")
        for line in summary_table(list(plain.RESULTS.values())).splitlines():
            terminalreporter.write_line(line)
    more = sys.modules.get("tests.interop.test_more_clients")
    if more is not None and getattr(more, "RESULTS", None):
        terminalreporter.write_line("")
        terminalreporter.write_line("on each client's default path against plain serve --log: its own records, and replay of serve's log")
        table = more.more_clients_table(list(more.RESULTS.values()))
        for line in table.splitlines():
            terminalreporter.write_line(line)
        (more.LAST_RUN / "more-clients.md").write_text(table + "\n")
    module = sys.modules.get("tests.interop.test_clients")
    if module is None or not getattr(module, "RESULTS", None):
        return
    rows = list(module.RESULTS.values())
    table = summary_table(rows)
    write = terminalreporter.write_line
    write("")
    write(f"real-client suite: {sum(len(r['exchanges']) for r in rows)} requests; install {module.INSTALL_SECONDS:.1f} s "
          f"(per folder, 0 = cached: {', '.join(f'{k} {v:.1f} s' for k, v in module.INSTALLED.seconds.items())}); "
          f"conversations {sum(r['seconds'] for r in rows):.1f} s, driver start-up (imports) "
          f"{', '.join(f'{k} {v:.1f} s' for k, v in module.STARTUP.items())}; logs in {module.LAST_RUN}")
    for line in table.splitlines():
        write(line)
    (module.LAST_RUN / "summary.md").write_text(table + "\n")
    for line in what_clients_send(rows):
        write("sent by " + line)
    refused = [(r["client"], r["model"], x) for r in rows for x in r["exchanges"]
               if x.refused and x.error_code not in r.get("expected", ())]
    for client, model, x in refused:
        write(f"refused: {client} on {model}: {x.status} {x.error}")
    distinct = {}
    for client, model, x in refused:
        distinct.setdefault((client, x.error), x)
    for (client, error), x in distinct.items():
        write(f"request shape ({client}, {error[:80]}): {json.dumps(x.shape)}")
