"""Where one process of a py-spy profile spends its samples, by thread role and by frame.

Why it exists: the scheduler benchmark (``bench/bench_scheduler.py``) gives the extender's CPU per
scheduled pod, not where it goes, and the extender runs two kinds of work that compete for one GIL: the
event loop answering kube-scheduler (filter / prioritize) and the watch threads reading pod and node events
into the cache. Record the whole benchmark with py-spy (``--subprocesses``, ``-f raw``; ``--gil`` to count
only samples that hold the GIL, i.e. Python work rather than waiting) and this prints, for the processes whose
command line contains ``--process``:

* samples per role: ``loop`` (a frame of asyncio or uvicorn), ``watch`` (a frame of ``KubeWatcher``),
  ``other`` (start-up imports, the usage poller, ...);
* the frames with the most inclusive samples (each frame counted once per stack), optionally within one
  role (``--role``), and the frames with the most samples of their own.

    py-spy record -s --gil --nonblocking -r 200 -f raw -o /tmp/gil.txt -- \\
        python bench/bench_scheduler.py --nodes 500 --pods 2000 --repeat 1 --results ''
    python bench/spy_threads.py /tmp/gil.txt --top 40
    python bench/spy_threads.py results/bench/profiles/scheduler-extender-gil-20261204.raw.gz --role watch

Prints figures; standard library only.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import re
import sys
from collections.abc import Iterable, Iterator

FRAME = re.compile(r"(?P<fn>.*?) \((?P<file>.*?):(?P<line>\d+)\)")
ROLES = ("loop", "watch", "other")


def role_of(frames: list[str]) -> str:
    """``watch`` for a watch thread's stack, ``loop`` for the event loop's, else ``other``."""
    if any("KubeWatcher" in f for f in frames):
        return "watch"
    if any("asyncio/" in f or "uvicorn/" in f for f in frames):
        return "loop"
    return "other"


def short(frame: str, *, lines: bool) -> str:
    """``function file`` (``file:line`` with ``lines``), the file relative to site-packages where it is there."""
    m = FRAME.fullmatch(frame)
    if not m:
        return frame
    where = m["file"].split("site-packages/")[-1]
    return f"{m['fn']} {where}:{m['line']}" if lines else f"{m['fn']} {where}"


def stacks(rows: Iterable[str], process: str) -> Iterator[tuple[list[str], int]]:
    """(frames, samples) of each raw row whose process line contains ``process`` (``process`` empty: every row, with
    or without a process line, as a recording of one ``--pid`` has none); raises on a malformed row."""
    for n, row in enumerate(rows, 1):
        row = row.rstrip("\n")
        if not row:
            continue
        stack, _, count = row.rpartition(" ")
        if not count.isdigit():
            raise ValueError(f"line {n}: no sample count at the end: {row[:80]!r}")
        parts = stack.split(";")
        procs = [p for p in parts if p.startswith("process ")]
        if process and (not procs or process not in procs[-1]):
            continue
        yield [p for p in parts if not p.startswith("process ")], int(count)


def summarise(rows: Iterable[str], *, process: str, role: str | None = None, lines: bool = False
              ) -> tuple[collections.Counter, collections.Counter, collections.Counter]:
    """Samples per role, inclusive samples per frame and own samples per frame (within ``role`` if given)."""
    roles: collections.Counter = collections.Counter()
    inclusive: collections.Counter = collections.Counter()
    own: collections.Counter = collections.Counter()
    for frames, count in stacks(rows, process):
        r = role_of(frames)
        roles[r] += count
        if role is not None and r != role:
            continue
        for name in {short(f, lines=lines) for f in frames}:
            inclusive[name] += count
        if frames:
            own[short(frames[-1], lines=True)] += count
    return roles, inclusive, own


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("raw", help="py-spy's raw output (-f raw), gzipped if it ends in .gz")
    parser.add_argument("--process", default="-m extender",
                        help="keep the processes whose command line contains this (default '-m extender')")
    parser.add_argument("--role", choices=ROLES, help="frames of this role only")
    parser.add_argument("--top", type=int, default=30, help="frames to list (default 30)")
    parser.add_argument("--lines", action="store_true", help="inclusive frames by line, not by function")
    args = parser.parse_args(argv)
    try:
        with (gzip.open(args.raw, "rt") if args.raw.endswith(".gz") else open(args.raw)) as f:
            roles, inclusive, own = summarise(f, process=args.process, role=args.role, lines=args.lines)
    except (OSError, ValueError) as exc:
        print(f"{args.raw}: {exc}", file=sys.stderr)
        return 2
    total = sum(roles.values())
    if not total:
        print(f"{args.raw}: no samples of a process matching {args.process!r}", file=sys.stderr)
        return 1
    print(f"{total} samples of processes matching {args.process!r}")
    for r in ROLES:
        print(f"  {r:6s} {roles[r]:7d}  {100 * roles[r] / total:5.1f} %")
    within = sum(roles[r] for r in ROLES if args.role in (None, r))
    print(f"\ninclusive ({args.role or 'all roles'}), % of those {within} samples")
    for name, count in inclusive.most_common(args.top):
        print(f"  {count:7d} {100 * count / within:5.1f} %  {name}")
    print(f"\nown ({args.role or 'all roles'})")
    for name, count in own.most_common(args.top):
        print(f"  {count:7d} {100 * count / within:5.1f} %  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
