"""Replaying recorded requests gives the recorded answers: a faster request path changes no decision.

``replay/corpus.json.gz`` holds a fixed cluster, ~380 filter / prioritize / bind / malformed requests in
both payload modes, and what the extender answered when it was recorded (``replay/make_corpus.py``), for
the model and a heuristic. Every answer must come back with the same status and the same JSON value.
"""

import gzip
import json

import pytest

from .replay.make_corpus import CORPUS, replay


@pytest.fixture(scope="module")
def corpus():
    with gzip.open(CORPUS, "rt", encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.parametrize("policy", ["model", "demand-aware"])
def test_replayed_requests_get_the_recorded_answers(corpus, policy, tmp_path):
    got = replay(corpus["cluster"], corpus["ops"], policy, tmp_path)
    expected = corpus["expected"][policy]
    assert len(got) == len(expected)
    mismatches = []
    for i, (op, want, have) in enumerate(zip(corpus["ops"], expected, got, strict=True)):
        if want["status"] != have["status"] or json.loads(want["body"]) != json.loads(have["body"]):
            mismatches.append(f"#{i} {op['verb']}: expected {want['status']} {want['body'][:200]}, "
                              f"got {have['status']} {have['body'][:200]}")
    assert not mismatches, f"{len(mismatches)} of {len(got)} answers changed:\n" + "\n".join(mismatches[:10])


def test_the_corpus_covers_both_modes_errors_and_every_score(corpus):
    ops, expected = corpus["ops"], corpus["expected"]["model"]
    bodies = [json.loads(op["body"]) if op["body"].startswith("{") and "NaN" not in op["body"] else {}
              for op in ops]
    assert any(b.get("NodeNames") for b in bodies) and any((b.get("Nodes") or {}).get("items") for b in bodies)
    assert {e["status"] for e in expected} == {200, 400}
    scores = {h["Score"] for op, e in zip(ops, expected, strict=True)
              if op["verb"] == "prioritize" and e["status"] == 200 for h in json.loads(e["body"])}
    assert scores == set(range(11))
