"""The lab report's own lines: runs whose arm timed out before every job ended."""

from lab.report import unfinished_lines


def test_runs_with_unfinished_jobs_are_named_and_their_jct_called_a_lower_bound() -> None:
    done = {"seed": "1", "arm": "default", "job": "j000", "jct_s": "10.0"}
    assert unfinished_lines([done]) == []
    lines = unfinished_lines([done, {**done, "arm": "worst-fit@off", "job": "j007", "jct_s": ""},
                              {**done, "arm": "worst-fit@off", "job": "j003", "jct_s": ""}])
    assert lines[0].startswith("**Unfinished jobs**") and "seed 1 `worst-fit@off`: 2 (j003 j007)" in lines[0]
    assert "lower bound" in lines[0] and "default" not in lines[0].split(":", 1)[1]
