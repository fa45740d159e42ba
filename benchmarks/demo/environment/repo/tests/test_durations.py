import pytest

from recordkit.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    "text, seconds",
    [("90s", 90.0), ("15m", 900.0), ("2h", 7200.0), ("1.5h", 5400.0), (" 10 m ", 600.0)],
)
def test_parse_single_unit(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["h", "5", "-5s", "5 x", "five minutes"])
def test_parse_rejects_garbage(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    "seconds, text", [(0, "0s"), (59, "59s"), (60, "1m"), (5400, "1h30m"), (3661, "1h1m1s")]
)
def test_format(seconds, text):
    assert format_duration(seconds) == text


def test_format_rejects_negative():
    with pytest.raises(ValueError):
        format_duration(-1)
