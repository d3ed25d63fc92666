"""Chapter 02: breakpoint and batch placement. The runtime's own code."""

from minimal_runtime.context import CallParts, LOOKBACK_BLOCKS, system_with_breakpoint, tail_layout, with_breakpoints

__all__ = ["CallParts", "LOOKBACK_BLOCKS", "system_with_breakpoint", "tail_layout", "with_breakpoints"]
