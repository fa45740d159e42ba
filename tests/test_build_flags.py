"""T0's build options read from the task's own command (sandbox/runners/build_flags.py): go
build tags and cargo features, in whatever form test.sh writes them; comments and other
commands say nothing."""
from __future__ import annotations

import pytest

from testjack_tui.sandbox.runners.build_flags import cargo_flags, go_flags


@pytest.mark.parametrize("script,expected", [
    ('go test -json -count=1 -tags integration -run "$P" ./... | tee x', ("-tags=integration",)),
    ("go test -tags=a,b ./... && go vet -tags 'c' ./...", ("-tags=a,b,c",)),
    ("go test \\\n  -tags e2e ./...", ("-tags=e2e",)),
    ("# go test -tags nope ./...\ngo test ./...", ()),
    ("echo -tags x", ()),
])
def test_go_build_tags(script, expected):
    assert go_flags(script) == expected


@pytest.mark.parametrize("script,expected", [
    ('cargo test --no-fail-fast --features "extra fast" -- --nocapture', ("--features=extra,fast",)),
    ("cargo nextest run --all-features -F x", ("--features=x", "--all-features")),
    ("cargo test --no-default-features --features=std $ARGS", ("--features=std", "--no-default-features")),
    ("cargo test --features $FEATURES", ()),
    ("cargo build --release; echo --features y", ()),
])
def test_cargo_features(script, expected):
    assert cargo_flags(script) == expected
