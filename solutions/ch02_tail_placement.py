"""Chapter 02: breakpoint and batch placement, both generations, and a call on a message thread.
The runtime's own code."""

from minimal_runtime.core.context import (CallParts, continuation, system_with_breakpoint, tail_layout, turn_scoped_layout,
                                          with_breakpoints)
from minimal_runtime.provider.models import CLEAR_AT_BETA, INLINE_TOOLS_BETA, LOOKBACK_BLOCKS

__all__ = ["CallParts", "CLEAR_AT_BETA", "INLINE_TOOLS_BETA", "LOOKBACK_BLOCKS", "continuation", "system_with_breakpoint",
           "tail_layout", "turn_scoped_layout", "with_breakpoints"]
