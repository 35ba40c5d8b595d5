"""The real local cluster drsched is tested, benchmarked and demonstrated on.

`harness.cluster.ControlPlane` starts the stock etcd, kube-apiserver, kube-scheduler and KWOK (built from
Go modules by `harness/controlplane/build.sh`, cached outside the clone) on loopback ports picked at run
time; `harness.procs` owns process groups and log tails; `harness.pki` the throwaway certificates;
`harness.objects` the node and pod shapes the tests and the demo create; `harness.schedconfig` renders the
shipped scheduler configurations; `harness.extender_proc` runs the real extender as a child process and
`harness.extender_double` records the raw payloads kube-scheduler sends (one test only).
`harness.realcluster.RealCluster` is the same control plane with real kubelet + containerd nodes instead of
KWOK (node setup in `harness.nodes`, their sizes in `policy.labworld`, host cleanup in `harness.hostres`, CLI
`python -m harness.realnodes`); opt-in host isolation (system and nodes on separate CPU sets) is decided in
`harness.isolation` and checked with `harness.placement`'s report. `harness.cache` says where everything
outliving a checkout is kept.

Tests (`tests/e2e`), benchmarks (`bench/`) and the demos (`lab demo`, `lab/kwokdemo`) import it as a normal package.
"""
