"""Start-up work every CLI process pays: the openai client (and httpx under it) is imported only
when a session talks to a model. The suite starts hundreds of CLI processes, and a scripted,
operator or report-only run has no use for it."""
from __future__ import annotations

import subprocess
import sys


def _loaded_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_the_agents_and_the_session_wiring_load_without_the_openai_client():
    loaded = _loaded_after("import testjack_tui.agents, testjack_tui.compose, testjack_tui.commands.audit_cmd")
    assert "testjack_tui.agents.chat" in loaded  # the module is there; only its client waits
    assert "openai" not in loaded and "httpx" not in loaded
    assert "jsonschema" not in loaded  # a model's submissions alone are checked against a schema
    assert "tomlkit" not in loaded  # no config file is read or written here


def test_a_model_session_still_gets_the_client():
    loaded = _loaded_after("from testjack_tui.agents.chat import OpenAIChatModel\n"
                           "from testjack_tui.config import Profile\n"
                           "OpenAIChatModel(Profile(name='p', base_url='http://127.0.0.1:9/v1', model='m'))")
    assert "openai" in loaded
