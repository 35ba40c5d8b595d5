"""PromQL rendering, instant-vector parsing, instance -> node mapping and combining (table tests)."""

import json

import pytest

from extender.providers.promql import (
    DEFAULT_QUERIES,
    InstanceMapper,
    PromError,
    Vector,
    combine,
    host_of,
    parse_vector,
    queries,
)


def answer(*series, ts=1000.0):
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": metric, "value": [ts, value]} for metric, value in series]}})


def test_default_queries_render_label_and_window():
    q = queries({}, label="node", window="30s")
    assert set(q) == {"cpu", "mem", "net", "disk", "timestamp"}
    assert all("$" not in text for text in q.values())
    assert q["cpu"] == 'sum by (node) (rate(node_cpu_seconds_total{mode!~"idle|iowait|steal"}[30s]))'
    assert 'device!~"lo|veth' in q["net"] and "node_network_transmit_bytes_total" in q["net"]
    assert "node_disk_written_bytes_total" in q["disk"] and "dm-.*" in q["disk"]
    assert "node_memory_MemAvailable_bytes" in DEFAULT_QUERIES["mem"]


def test_overrides_replace_and_empty_drops_timestamp():
    q = queries({"cpu": "my_cpu{x=\"$label\"}", "timestamp": ""}, label="instance", window="1m")
    assert q["cpu"] == 'my_cpu{x="instance"}' and "timestamp" not in q


def test_parse_vector():
    v = parse_vector(answer(({"instance": "a:9100"}, "1.5"), ({"instance": "b:9100"}, "NaN"),
                            ({"job": "x"}, "2"), ({"instance": "c:9100"}, "+Inf")), label="instance")
    assert v.values == {"a:9100": 1.5} and v.skipped == 3 and v.eval_ts == 1000.0


def test_empty_vector_is_not_an_error():
    assert parse_vector(answer(), label="instance") == Vector(values={}, eval_ts=None, skipped=0)


@pytest.mark.parametrize(("body", "reason"), [
    ("not json", "bad_response"),
    ("[]", "bad_response"),
    ('{"status": "error", "errorType": "bad_data", "error": "parse error at char 5"}', "query_error"),
    ('{"status": "success"}', "bad_response"),
    ('{"status": "success", "data": {"resultType": "matrix", "result": []}}', "bad_response"),
    ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1]}]}}',
     "bad_response"),
    ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, "x"]}]}}',
     "bad_response"),
    ('{"status": "success", "data": {"resultType": "vector", "result": ["x"]}}', "bad_response"),
    (b"\xff", "bad_response"),
])
def test_parse_garbage(body, reason):
    with pytest.raises(PromError) as exc:
        parse_vector(body, label="instance")
    assert exc.value.reason == reason


@pytest.mark.parametrize(("value", "host"), [
    ("10.0.0.5:9100", "10.0.0.5"), ("node-a", "node-a"), ("[fd00::1]:9100", "fd00::1"), ("fd00::1", "fd00::1"),
])
def test_host_of(value, host):
    assert host_of(value) == host


@pytest.mark.parametrize(("value", "node"), [
    ("127.0.0.1:9100", "explicit"),      # explicit map, full value
    ("10.9.9.9:9100", "by-host"),        # explicit map, host part
    ("node-a", "node-a"),                # a node name
    ("node-b:9100", "node-b"),           # a node name with a port
    ("10.0.0.7:9100", "node-c"),         # a node address
    ("10.0.0.8:9100", None),             # nothing: unmapped, never guessed
])
def test_instance_mapping(value, node):
    mapper = InstanceMapper({"127.0.0.1:9100": "explicit", "10.9.9.9": "by-host"}, ["node-a", "node-b", "node-c"],
                            {"10.0.0.7": "node-c"})
    assert mapper.node_for(value) == node


def test_combine_requires_cpu_and_mem_and_ages_by_last_scrape():
    vec = {
        "cpu": Vector({"a:1": 1.0, "b:1": 2.0, "zz:1": 5.0}, 1000.0, 0),
        "mem": Vector({"a:1": 3.0}, 1000.0, 0),
        "net": Vector({}, None, 0),
        "disk": Vector({"a:1": 7.0}, 1000.0, 0),
        "timestamp": Vector({"a:1": 990.0}, 1000.0, 0),
    }
    samples, unmapped = combine(vec, mapper=InstanceMapper({}, ["a", "b"]), now=5000.0)
    assert set(samples) == {"a"} and unmapped == ["zz:1"]     # b has no memory: no_data
    a = samples["a"]
    assert (a.cpu, a.mem, a.net, a.disk, a.timestamp) == (1.0, 3.0, 0.0, 7.0, 4990.0)


def test_combine_without_timestamp_query_is_now():
    vec = {"cpu": Vector({"a": 1.0}, 1.0, 0), "mem": Vector({"a": 1.0}, 1.0, 0)}
    samples, _ = combine(vec, mapper=InstanceMapper({}, ["a"]), now=42.0)
    assert samples["a"].timestamp == 42.0
