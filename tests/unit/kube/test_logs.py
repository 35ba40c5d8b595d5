"""The logging convention: a constant message with key=value fields, as JSON or text."""

from __future__ import annotations

import json
import logging

from kube.logs import JsonFormatter, TextFormatter, kv


def record(msg: str, **fields) -> logging.LogRecord:
    rec = logging.LogRecord("drsched.test", logging.INFO, __file__, 1, msg, None, None)
    for k, v in (kv(**fields) if fields else {}).items():
        setattr(rec, k, v)
    return rec


def test_json_line_has_the_fields_as_keys():
    line = json.loads(JsonFormatter().format(record("bound pod", pod="ns/p", node="n1", n=3)))
    assert line["msg"] == "bound pod" and line["level"] == "info" and line["logger"] == "drsched.test"
    assert (line["pod"], line["node"], line["n"]) == ("ns/p", "n1", 3)


def test_text_line_appends_key_value_and_a_record_without_fields_is_plain():
    fmt = TextFormatter("%(levelname)s %(message)s")
    assert fmt.format(record("bound pod", pod="ns/p", node="n1")) == "INFO bound pod pod=ns/p node=n1"
    assert fmt.format(record("plain")) == "INFO plain"
    assert json.loads(JsonFormatter().format(record("plain")))["msg"] == "plain"
