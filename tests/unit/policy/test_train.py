"""``policy.train --contention``: training and its held-out evaluation run in the named set, or refuse it."""

import pytest

from policy.sim.calibration import shipped
from policy.train import make_env_config, parse_args


def test_the_named_set_is_the_training_worlds():
    args = parse_args(["--contention", "fitted-lab"])
    assert make_env_config(args).base.contention == shipped("fitted-lab")
    assert make_env_config(parse_args([])).base.contention is None  # the calibration file's active set


def test_an_unknown_set_stops_before_training(capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(["--contention", "moon"])
    assert exc.value.code == 2
    assert "no parameter set 'moon'; known: original" in capsys.readouterr().err
