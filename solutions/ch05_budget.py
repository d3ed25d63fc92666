"""Chapter 05: the warn-once budget hook. The runtime's own code."""

from minimal_runtime.features.budget import BudgetMonitor

__all__ = ["BudgetMonitor"]
