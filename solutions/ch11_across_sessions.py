"""Chapter 11: the progress file's writer, what the next session must know.

All three are the runtime's own (``features/handoff.py``): ``SessionHandoff.end`` builds a
``Progress`` from the run's state with ``written_paths`` and ``next_step``, and writes
``Progress.render()`` whole to ``progress.md``."""

from minimal_runtime.features.handoff import Progress, next_step, written_paths

__all__ = ["next_step", "progress_text", "written_paths"]


def progress_text(progress: Progress) -> str:
    return progress.render()
