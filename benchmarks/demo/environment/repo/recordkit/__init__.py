"""recordkit: configuration and record helpers."""
from .cache import TTLCache, memoize
from .durations import format_duration, parse_duration
from .merge import deep_merge, flatten, merge_all, unflatten
from .records import RecordSet

__version__ = "0.3.0"

__all__ = [
    "RecordSet",
    "TTLCache",
    "deep_merge",
    "flatten",
    "format_duration",
    "memoize",
    "merge_all",
    "parse_duration",
    "unflatten",
]
