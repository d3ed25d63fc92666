"""Chapter 02: breakpoint and batch placement. The runtime's own code."""

from minimal_runtime.core.context import CallParts, system_with_breakpoint, tail_layout, with_breakpoints
from minimal_runtime.provider.models import LOOKBACK_BLOCKS

__all__ = ["CallParts", "LOOKBACK_BLOCKS", "system_with_breakpoint", "tail_layout", "with_breakpoints"]
