"""A minimal runtime for long-horizon agents, built chapter by chapter.

    core/      the forkable loop (agent, config, context, hooks, tools, messages, store, steering);
               ``python -m minimal_runtime fork DEST`` writes it with provider/ as a package of your own
    provider/  facts about providers: the sourced per-model table, dollars from usage
    features/  one chapter's idea each, installed as hooks on a core agent
    emulator/  the offline Messages API (the instrument); owns the simulated model's Policy
    replay/    recorded runs replayed under other context strategies
    example/   the course's running example, simulated policies, the demo
    view/      what a notebook shows of a call

This module re-exports the concrete core and its protocols, so a notebook or a fork imports from
one place. Importing it loads the core only: no emulator, no plotting, no example.
"""

from .core import *  # noqa: F401,F403  (the concrete core and its protocols: core.__all__)
from .core import __all__  # noqa: F401
