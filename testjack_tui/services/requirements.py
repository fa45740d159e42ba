"""The requirements panel's data: the engine's one requirements checklist
(`testjack_tui.engine.requirements`), shared with the report."""
from testjack_tui.engine.requirements import RequirementRow, requirements_table, same_requirement

__all__ = ["RequirementRow", "requirements_table", "same_requirement"]
