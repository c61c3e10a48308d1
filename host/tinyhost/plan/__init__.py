"""Static memory planning: one arena, its size known on the host (ARCHITECTURE.md §4.2)."""

from tinyhost.plan.options import PlanOptions
from tinyhost.plan.planner import MemoryPlan, PlannedBuffer, UsedOverlap, plan_memory

__all__ = ["MemoryPlan", "PlanOptions", "PlannedBuffer", "UsedOverlap", "plan_memory"]
