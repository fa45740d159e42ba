import pytest

from recordkit.durations import parse_duration


@pytest.mark.parametrize("text, seconds", [("1w", 604800.0), ("250ms", 0.25), ("1h30m15s", 5415.0), ("1.5h 30m", 7200.0), ("2d4h", 187200.0)])
def test_valid(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", " ", "5x", "10", "1h 30", "h1", "1h,30m"])
def test_invalid(text):
    with pytest.raises(ValueError):
        parse_duration(text)
