"""The agents: audit, reviewer and task-analysis roles over any OpenAI-compatible endpoint,
plus the scripted offline demo and operator modes. No Textual imports here.

Public API (what the engine, CLI and TUI use):
- make_roles(agents, benchmark, config=None) -> Roles(audit, reviewer, task_analysis)
- SandboxTools(sandbox, task, trial, worlds, evidence) — roles.WorldTools over live containers
- OperatorAuditAgent.submit_candidate(path, source, requirement) / finish()
- read_transcript(path), transcript_file(session_id, role, task_id, trial_id)
"""
from .chat import OpenAIChatModel, Usage
from .errors import AgentError, EndpointError, ScriptError
from .factory import Roles, make_roles
from .ledger import MemoryLedger
from .operator import OperatorAuditAgent, OperatorReviewer
from testjack_tui.engine.ambiguity import quote_in_prompt

from .roles_llm import LLMAuditAgent, LLMReviewer, LLMTaskAnalyst
from .scripted import SCRIPTED_LABEL, ScriptedAuditAgent, ScriptedReviewer, ScriptedTaskAnalyst
from .tools import SandboxTools
from .transcript import read_transcript, transcript_file
from .untrusted import sanitize_reference_feedback

__all__ = [
    "AgentError", "EndpointError", "ScriptError", "LLMAuditAgent", "LLMReviewer", "LLMTaskAnalyst",
    "MemoryLedger", "OpenAIChatModel", "OperatorAuditAgent", "OperatorReviewer", "Roles",
    "SCRIPTED_LABEL", "SandboxTools", "ScriptedAuditAgent", "ScriptedReviewer", "ScriptedTaskAnalyst",
    "Usage", "make_roles", "quote_in_prompt", "read_transcript", "sanitize_reference_feedback",
    "transcript_file",
]
