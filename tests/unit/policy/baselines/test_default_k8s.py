import pytest

from policy.baselines.default_k8s import DefaultK8s
from policy.state import PodView
from tests.unit.policy.helpers import snapshot


# Hand-computed with kube-scheduler's integer maths (millicores, MiB):
#   n0: alloc 4000m/16384Mi, requested' 1500m/3072Mi -> least 62, 81 -> 71; fractions .375/.1875 -> std
#       .09375 -> balanced 90; total 161
#   n1: alloc 8000m/32768Mi, requested' 500m/1024Mi -> least 93, 96 -> 94; std .015625 -> 98; total 192
#   n2: over-committed cpu -> least_cpu 0, mem 93 -> 46; fractions capped 1, .0625 -> std .46875 -> 53; 99
@pytest.mark.parametrize(
    "cap,requested,expected",
    [
        ([4, 16, 1, 1], [1, 2], 161),
        ([8, 32, 1, 1], [0, 0], 192),
        ([2, 16, 1, 1], [2, 0], 99),
    ],
)
def test_hand_computed(cap, requested, expected):
    snap = snapshot([cap], requested=[requested])
    assert DefaultK8s().score(snap, PodView.from_requests(0.5, 1))[0] == expected


def test_zero_request_pod_counts_as_non_zero_defaults():
    snap = snapshot([[4, 16, 1, 1]])
    zero = DefaultK8s().score(snap, PodView.from_requests(0, 0))[0]
    default = DefaultK8s().score(snap, PodView.from_requests(0.1, 200 / 1024))[0]
    assert zero == default
