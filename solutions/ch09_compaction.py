"""Chapter 09: the verbatim appendix and the ladder's decision. The runtime's own code."""

from minimal_runtime.features.compaction import ladder_step
from minimal_runtime.features.recall import appendix

__all__ = ["appendix", "ladder_step"]
