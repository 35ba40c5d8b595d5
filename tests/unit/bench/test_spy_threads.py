"""bench/spy_threads.py: py-spy raw rows split by process and thread role, inclusive and own samples."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))  # run as a script, bench/ is on its path

import spy_threads  # noqa: E402

BENCH = 'process 10:"python bench/bench_scheduler.py"'
EXT = 'process 11:"python -m extender --policy=model"'
LOOP = ("BaseEventLoop.run_forever (/usr/lib/python3.11/asyncio/base_events.py:607);"
        "answer (/work/extender/fastwire.py:127)")
WATCH = ("Thread.run (threading.py:982);KubeWatcher._loop (/work/extender/kube.py:223);"
         "apply_pod_event (/work/extender/kube.py:97)")
ROWS = [
    f"{BENCH};{EXT};{LOOP} 30\n",
    f"{BENCH};{EXT};{WATCH} 10\n",
    f"{BENCH};{EXT};<module> (/work/extender/__main__.py:125) 5\n",
    f"{BENCH};main (/work/bench/bench_scheduler.py:400) 99\n",  # the bench itself: not the extender
    "\n",
]


def test_roles_count_only_the_matching_process():
    roles, inclusive, own = spy_threads.summarise(ROWS, process="-m extender")
    assert roles == {"loop": 30, "watch": 10, "other": 5}
    assert inclusive["answer /work/extender/fastwire.py"] == 30
    assert inclusive["apply_pod_event /work/extender/kube.py"] == 10
    assert "main /work/bench/bench_scheduler.py" not in inclusive
    assert own["apply_pod_event /work/extender/kube.py:97"] == 10


def test_role_filter_and_frames_counted_once_per_stack():
    rows = [f"{EXT};{WATCH};{WATCH.split(';')[-1]} 4\n"]  # the same frame twice in one stack (recursion)
    _, inclusive, _ = spy_threads.summarise(rows, process="extender", role="watch")
    assert inclusive["apply_pod_event /work/extender/kube.py"] == 4
    _, inclusive, _ = spy_threads.summarise(rows, process="extender", role="loop")
    assert not inclusive


def test_malformed_row_names_its_line():
    with pytest.raises(ValueError, match="line 2"):
        list(spy_threads.stacks([f"{EXT};{LOOP} 3\n", f"{EXT};{LOOP}\n"], "extender"))


def test_main_reports_no_match_and_bad_file(tmp_path, capsys):
    raw = tmp_path / "raw.txt"
    raw.write_text("".join(ROWS))
    assert spy_threads.main([str(raw), "--process", "kube-scheduler"]) == 1
    assert spy_threads.main([str(tmp_path / "missing.txt")]) == 2
    assert spy_threads.main([str(raw), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "45 samples" in out and " loop        30  " in out


def test_main_reads_gzipped_raw(tmp_path, capsys):
    import gzip

    raw = tmp_path / "raw.txt.gz"
    with gzip.open(raw, "wt") as f:
        f.writelines(ROWS)
    assert spy_threads.main([str(raw), "--role", "watch"]) == 0
    assert "inclusive (watch), % of those 10 samples" in capsys.readouterr().out


def test_an_empty_process_keeps_every_row_as_a_recording_of_one_pid_has_no_process_line():
    rows = [f"{LOOP} 3\n", f"{WATCH} 2\n", f"{EXT};{WATCH} 1\n"]
    roles, _, _ = spy_threads.summarise(rows, process="")
    assert dict(roles) == {"loop": 3, "watch": 3}
    roles, _, _ = spy_threads.summarise(rows, process="-m extender")  # a named process needs its process line
    assert dict(roles) == {"watch": 1}
