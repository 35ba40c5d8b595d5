"""Render the user-facing KubeSchedulerConfiguration files in kube-scheduler-config/ for a test cluster.

The e2e tests run the very files users copy; only the fields that depend on where things run are
substituted (kubeconfig path, extender URL, TLS file paths) and leader election is turned off so a
restarted scheduler does not wait for its old lease to expire. There is no second copy of the config.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

CONFIG_DIR = Path(__file__).resolve().parents[1] / "kube-scheduler-config"


@dataclass(frozen=True)
class ExtenderTls:
    """Files the scheduler uses to reach an HTTPS extender (mTLS variant)."""

    cert_file: Path
    key_file: Path
    ca_file: Path
    server_name: str | None = None


def config_files() -> list[Path]:
    """Every shipped scheduler config, for tests that check them all."""
    return sorted(CONFIG_DIR.glob("*.yaml"))


def render(
    source: str | Path,
    dest: Path,
    *,
    kubeconfig: Path,
    extender_url: str | None = None,
    tls: ExtenderTls | None = None,
) -> Path:
    """Write `source` (a file name in kube-scheduler-config/ or a path) to `dest` with local fields filled in.

    `extender_url` replaces the scheme, host and port of every extender's urlPrefix and keeps its path.
    """
    source_path = Path(source) if Path(source).is_absolute() else CONFIG_DIR / source
    config = yaml.safe_load(source_path.read_text())
    config.setdefault("clientConnection", {})["kubeconfig"] = str(kubeconfig)
    config.setdefault("leaderElection", {})["leaderElect"] = False
    for extender in config.get("extenders") or []:
        if extender_url is not None:
            extender["urlPrefix"] = _rebase(extender["urlPrefix"], extender_url)
        if extender.get("enableHTTPS"):
            if tls is None:
                raise ValueError(f"{source_path.name} talks HTTPS to its extender: pass tls=ExtenderTls(...)")
            tls_config = extender.setdefault("tlsConfig", {})
            tls_config.update(certFile=str(tls.cert_file), keyFile=str(tls.key_file), caFile=str(tls.ca_file))
            if tls.server_name is not None:
                tls_config["serverName"] = tls.server_name
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(yaml.safe_dump(config, sort_keys=False))
    return dest


def _rebase(url_prefix: str, base: str) -> str:
    """`http://127.0.0.1:8888/x` rebased on `http://127.0.0.1:41234` → `http://127.0.0.1:41234/x`."""
    old, new = urlsplit(url_prefix), urlsplit(base)
    path = new.path.rstrip("/") + "/" + old.path.lstrip("/")
    return f"{new.scheme}://{new.netloc}{path}"
