"""The TOML config: defaults from the environment, profiles, roles, pricing, comments kept."""
from __future__ import annotations

import pytest

from testjack_tui.config import Price, Profile, config_path, load_config, save_config
from testjack_tui.errors import InputError

SAMPLE = """\
# my endpoints
[profiles.default]
base_url = "https://api.example.com/v1"  # the cloud
model = "big-model"

[profiles.local]
base_url = "http://127.0.0.1:8000/v1"
model = "qwen-coder"
api_key_env = "LOCAL_KEY"
timeout = 30
temperature = 0.2

[roles]
audit = "default"
reviewer = "local"

# prices in USD per million tokens
[pricing."big-model"]
input_per_mtok = 3.0
output_per_mtok = 15.0
"""


def test_defaults_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("TESTJACK_MODEL", "llama3")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config()
    profile = config.profile_for_role("audit")
    assert (profile.name, profile.base_url, profile.model) == ("default", "http://localhost:11434/v1", "llama3")
    assert profile.api_key() == "sk-test"


def test_profiles_roles_and_pricing(monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "abc")
    config_path().parent.mkdir(parents=True)
    config_path().write_text(SAMPLE)
    config = load_config()
    assert config.profile_for_role("reviewer").model == "qwen-coder"
    assert config.profile_for_role("reviewer").timeout == 30.0
    assert config.profile_for_role("reviewer").api_key() == "abc"
    assert config.profile_for_role("task_analysis").name == "default"  # unassigned role
    assert config.price("big-model").cost(1_000_000, 100_000) == pytest.approx(4.5)
    assert config.price("qwen-coder") is None


def test_save_keeps_comments_and_adds_profiles():
    config_path().parent.mkdir(parents=True)
    config_path().write_text(SAMPLE)
    config = load_config()
    config.profiles["vllm"] = Profile(name="vllm", base_url="http://10.0.0.2:8000/v1", model="coder")
    config.roles["task_analysis"] = "vllm"
    config.pricing["coder"] = Price(0.1, 0.2)
    save_config(config)
    text = config_path().read_text()
    assert "# my endpoints" in text and "# the cloud" in text and "# prices in USD" in text
    again = load_config()
    assert again.profile_for_role("task_analysis").base_url == "http://10.0.0.2:8000/v1"
    assert again.price("coder") == Price(0.1, 0.2)
    assert again.profile("local").temperature == 0.2


def test_fresh_save_round_trips():
    config = load_config()
    config.roles["audit"] = "default"
    path = save_config(config)
    assert path == config_path() and load_config().roles == {"audit": "default"}


@pytest.mark.parametrize("text, field", [
    ('[profiles.x]\ntimeout = "soon"\n', "profiles.x.timeout"),
    ('[profiles.x]\nmodle = "m"\n', "profiles.x.modle"),
    ('[roles]\naudit = "missing"\n', "roles.audit"),
    ('[roles]\njudge = "default"\n', "roles.judge"),
    ('[pricing."m"]\ninput_per_mtok = 1\n', 'pricing."m"'),
    ("[profiles\n", None),
])
def test_bad_config_is_one_line_naming_file_and_field(text, field):
    config_path().parent.mkdir(parents=True)
    config_path().write_text(text)
    with pytest.raises(InputError) as info:
        load_config()
    assert info.value.field == field and str(config_path()) in str(info.value)
    assert "\n" not in str(info.value)


def test_unknown_profile_names_the_known_ones():
    with pytest.raises(InputError, match="known: default"):
        load_config().profile("nope")
