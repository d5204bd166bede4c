"""Static checks of deploy/Dockerfile, docker-compose.yml and deploy/k8s (no Docker engine here).

Every command the deployment runs is checked against the real names: the Celery app module,
the queues, Celery's own CLI options (from ``celery <sub> --help``) and memcore's CLI.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from memcore.core.config import Settings
from tests.support.docs_text import pages

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
K8S = ROOT / "deploy" / "k8s"
# Docs whose shell blocks must only use real memcore subcommands.
DOCS = pages()
VENV_BIN = ROOT / ".venv" / "bin"

APP_MODULE = "workers.app"
QUEUES = {"ingest", "consolidate", "hooks"}
TASKS = {"memcore.ingest", "memcore.consolidate", "memcore.schedule_due"}
CELERY_SERVICES = {"worker-ingest", "worker-consolidate", "worker-hooks", "beat", "flower"}
MEMCORE_SERVICES = CELERY_SERVICES | {"api"}
CELERY_SUBCOMMANDS = {"worker", "beat", "flower", "inspect"}
# Environment variables that are not MEMCORE_* settings but are read by something real.
OTHER_ENV = {"PROMETHEUS_MULTIPROC_DIR", "FLOWER_BASIC_AUTH", "REDIS_PASSWORD", "REDISCLI_AUTH"}

Obj = dict[str, Any]


# ---------------------------------------------------------------- loading


@functools.cache
def compose() -> Obj:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


@functools.cache
def k8s_objects() -> tuple[Obj, ...]:
    """All objects of the kustomization's resources, in order."""
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    objs: list[Obj] = []
    for name in kustomization["resources"]:
        path = K8S / name
        assert path.is_file(), f"kustomization lists missing {name}"
        objs += [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    return tuple(objs)


def by_kind(kind: str) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in k8s_objects() if o["kind"] == kind}


def workloads() -> dict[str, Obj]:
    return {**by_kind("Deployment"), **by_kind("StatefulSet")}


def containers(workload: Obj) -> list[Obj]:
    return list(workload["spec"]["template"]["spec"]["containers"])


def memcore_containers() -> Iterator[tuple[str, Obj]]:
    for name, wl in by_kind("Deployment").items():
        for c in containers(wl):
            if c["image"].split(":")[0] == "memcore":
                yield name, c


def shell_words(cmd: list[str] | str) -> list[str]:
    """A command as words; ``sh -c "..."`` / CMD-SHELL strings are split too."""
    if isinstance(cmd, str):
        return shlex.split(cmd)
    if cmd[:1] in (["CMD"], ["CMD-SHELL"]):
        return shell_words(cmd[1] if cmd[0] == "CMD-SHELL" else cmd[1:])
    if cmd[:2] == ["sh", "-c"]:
        return shlex.split(cmd[2])
    return list(cmd)


def all_commands() -> list[tuple[str, list[str]]]:
    """(where, words) for every command run by compose and k8s (services and probes)."""
    out: list[tuple[str, list[str]]] = []
    for name, svc in compose()["services"].items():
        if "command" in svc:
            out.append((f"compose {name}", shell_words(svc["command"])))
        if "healthcheck" in svc:
            out.append((f"compose {name} healthcheck", shell_words(svc["healthcheck"]["test"])))
    for name, wl in workloads().items():
        for c in containers(wl):
            out.append((f"k8s {name}", shell_words(c.get("command", []) + c.get("args", []))))
            for probe in ("livenessProbe", "readinessProbe"):
                if "exec" in c.get(probe, {}):
                    out.append((f"k8s {name} {probe}", shell_words(c[probe]["exec"]["command"])))
    return out


def celery_invocations() -> list[tuple[str, list[str]]]:
    return [(w, words) for w, words in all_commands() if words[:1] == ["celery"]]


def option(words: list[str], *names: str) -> str | None:
    """The value of an option given as ``-x v``, ``--xx v`` or ``--xx=v``."""
    for i, word in enumerate(words):
        for name in names:
            if word == name and i + 1 < len(words):
                return words[i + 1]
            if word.startswith(name + "="):
                return word.split("=", 1)[1]
    return None


@functools.cache
def celery_help(sub: str) -> str:
    cmd = [str(VENV_BIN / "celery"), *sub.split(), "--help"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


# ---------------------------------------------------------------- Dockerfile


def test_dockerfile() -> None:
    text = DOCKERFILE.read_text()
    froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert froms and all(f == "python:3.11-slim" for f in froms)
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users and users[-1].split(":")[0] not in {"root", "0"}, "must run as non-root"
    installs = re.findall(r"pip install ([^\n]+)", text)
    # The runtime plus Flower (the `flower` service runs this image); no dev extras.
    assert installs == ["'.[flower]'"], f"install the project with Flower only, got {installs}"
    entry = re.search(r"^ENTRYPOINT\s+(\[.*\])", text, re.M)
    assert entry is not None
    # Every COPY source exists (the build context is the repository root).
    for line in re.findall(r"^COPY\s+(?!--from)(.+)$", text, re.M):
        words = [w for w in line.split() if not w.startswith("--")]
        for src in words[:-1]:
            assert (ROOT / src).exists(), f"COPY source {src} missing"
    script = ROOT / "deploy" / "entrypoint.sh"
    assert os.access(script, os.X_OK)
    assert script.read_text().rstrip().endswith('exec "$@"')
    # The context is the repo root: ignore everything (.venv!) but what the build copies.
    ignore = (ROOT / "deploy" / "Dockerfile.dockerignore").read_text().split("\n")
    rules = [r for r in ignore if r and not r.startswith("#")]
    assert rules[0] == "**" and not any(".venv" in r for r in rules)


def test_entrypoint_resets_metrics_dir_and_execs(tmp_path: Path) -> None:
    mp = tmp_path / "prom"
    mp.mkdir()
    (mp / "counter_123.db").write_bytes(b"stale")
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(mp)}
    script = str(ROOT / "deploy" / "entrypoint.sh")
    done = subprocess.run(
        [script, "sh", "-c", "ls -A \"$PROMETHEUS_MULTIPROC_DIR\"; echo ran"],
        env=env, capture_output=True, text=True, timeout=30, check=True,
    )
    assert done.stdout.split() == ["ran"]


# ---------------------------------------------------------------- compose


def test_compose_services_and_image() -> None:
    services = compose()["services"]
    assert MEMCORE_SERVICES | {"redis"} <= set(services)
    for name in MEMCORE_SERVICES | {"cli"}:
        svc = services[name]
        assert svc["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (ROOT / svc["build"]["context"] / svc["build"]["dockerfile"]).is_file()
        assert svc["image"] == "memcore:latest", "one image for every process"
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy"
    for name in MEMCORE_SERVICES | {"redis"}:
        assert "healthcheck" in services[name], f"{name} has no healthcheck"


def test_compose_redis_durability() -> None:
    redis = compose()["services"]["redis"]
    assert redis["image"].startswith("redis:7")
    cmd = " ".join(redis["command"])
    assert "--appendonly yes" in cmd
    assert "--appendfsync everysec" in cmd
    assert redis["command"][redis["command"].index("--save") + 1] == "", \
        "no RDB snapshot may keep erased bytes"
    assert "--maxmemory-policy noeviction" in cmd
    assert "--maxmemory " in cmd, "noeviction means nothing without a maxmemory"
    volume = redis["volumes"][0].split(":")
    assert volume[1] == "/data" and volume[0] in compose()["volumes"]
    assert shell_words(redis["healthcheck"]["test"]) == ["redis-cli", "ping"]
    _removes_crash_leftovers(redis["entrypoint"])


def test_compose_flower_auth_and_worker_options() -> None:
    services = compose()["services"]
    assert "${FLOWER_BASIC_AUTH" in services["flower"]["environment"]["FLOWER_BASIC_AUTH"]
    consolidate = services["worker-consolidate"]["command"]
    assert option(consolidate, "--prefetch-multiplier") == "1"
    for name in ("worker-ingest", "worker-consolidate"):
        env = services[name]["environment"]
        assert env["PROMETHEUS_MULTIPROC_DIR"] and env["MEMCORE_METRICS_PORT"]
    # Flower uses prometheus_client's default registry: multiprocess mode would empty it.
    assert "PROMETHEUS_MULTIPROC_DIR" not in services["flower"]["environment"]


def test_env_names_are_real_settings() -> None:
    """Every MEMCORE_* variable set anywhere is a field of memcore.core.config.Settings."""
    fields = set(Settings.model_fields)
    names: list[tuple[str, str]] = []
    for svc_name, svc in compose()["services"].items():
        names += [(f"compose {svc_name}", k) for k in (svc.get("environment") or {})]
    for obj in [*by_kind("ConfigMap").values(), *by_kind("Secret").values()]:
        data = obj.get("data") or obj.get("stringData") or {}
        names += [(f"k8s {obj['metadata']['name']}", k) for k in data if k.isupper()]
    for wl_name, wl in workloads().items():
        for c in containers(wl):
            names += [(f"k8s {wl_name}", e["name"]) for e in c.get("env", [])]
    assert names
    for where, name in names:
        if name.startswith("MEMCORE_"):
            assert name.removeprefix("MEMCORE_").lower() in fields, f"{where}: unknown {name}"
        else:
            assert name in OTHER_ENV, f"{where}: unexpected variable {name}"


# ---------------------------------------------------------------- commands vs real names


def test_celery_commands_use_the_real_app_and_queues() -> None:
    invocations = celery_invocations()
    assert len(invocations) >= 10
    seen_queues: set[str] = set()
    for where, words in invocations:
        assert option(words, "-A", "--app") == APP_MODULE, where
        sub = words[3]
        assert sub in CELERY_SUBCOMMANDS, f"{where}: celery {sub}"
        queues = option(words, "-Q", "--queues")
        if sub == "worker":
            assert queues, f"{where}: a worker must name its queue"
            assert set(queues.split(",")) <= QUEUES, where
            seen_queues |= set(queues.split(","))
            node = option(words, "-n", "--hostname")
            assert node and node.split("@")[0] == queues, f"{where}: node name {node}"
        if sub == "inspect":
            assert words[4] == "ping"
            dest = option(words, "-d", "--destination")
            assert dest and dest.split("@")[0] in QUEUES, f"{where}: destination {dest}"
    assert seen_queues == QUEUES
    module = ROOT / Path(*APP_MODULE.split(".")).with_suffix(".py")
    if not module.is_file():
        pytest.skip(f"{module.relative_to(ROOT)} not written yet: names checked, import not")
    # The app, its queues, the task names the processes rely on and beat's schedule.
    check = textwrap.dedent(
        f"""
        from celery import Celery
        import {APP_MODULE} as m
        assert isinstance(m.app, Celery), type(m.app)
        queues = {{q.name for q in m.app.conf.task_queues}}
        assert queues == set({sorted(QUEUES)!r}), queues
        missing = set({sorted(TASKS)!r}) - set(m.app.tasks)
        assert not missing, f"tasks not registered: {{missing}}"
        for entry in (m.app.conf.beat_schedule or {{}}).values():
            assert entry["task"] in m.app.tasks, entry
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, timeout=60, check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")},
    )
    assert done.returncode == 0, done.stderr


def test_celery_options_exist_in_celery_cli() -> None:
    """Each long option a command uses appears in ``celery <sub> --help``."""
    for where, words in celery_invocations():
        sub = words[3]
        if sub == "flower":
            continue  # flower's options are tornado-style; checked by test_flower_* below
        help_text = celery_help("inspect ping" if sub == "inspect" else sub)
        for word in words[4:]:
            if word.startswith("-"):
                flag = word.split("=", 1)[0]
                assert re.search(rf"(^|[\s,]){re.escape(flag)}\b", help_text), f"{where}: {flag}"


def test_flower_options_exist() -> None:
    from flower.options import options

    for where, words in celery_invocations():
        if words[3] == "flower":
            for word in words[4:]:
                name = word.lstrip("-").split("=", 1)[0]
                assert name in options, f"{where}: flower has no option {word}"
    assert "basic_auth" in options  # set through FLOWER_BASIC_AUTH


def memcore_subcommands() -> list[tuple[str, str]]:
    """(where, subcommand) of every ``memcore X`` in compose, k8s and the docs' shell blocks."""
    found = [(w, words[1]) for w, words in all_commands() if words[:1] == ["memcore"]]
    for doc in DOCS:
        if not doc.is_file():
            continue
        # Pair every fence (whatever its language) so a python block's closing fence is
        # never read as an opening one; only shell blocks hold commands.
        fenced = re.findall(r"```([a-z]*)\n(.*?)```", doc.read_text(), re.S)
        blocks = [body for lang, body in fenced if lang in ("", "sh", "bash", "console", "shell")]
        for block in blocks:
            for m in re.finditer(r"(?:^|\s)memcore ([a-z][a-z-]*)", block, re.M):
                found.append((doc.name, m.group(1)))
    return found


def test_memcore_subcommands_exist() -> None:
    found = memcore_subcommands()
    assert found, "compose's cli service runs memcore"
    exe = VENV_BIN / "memcore"
    for sub in sorted({s for _, s in found}):
        args = [str(exe), "--help"] if sub == "--help" else [str(exe), sub, "--help"]
        done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
        where = [w for w, s in found if s == sub]
        assert done.returncode == 0, f"memcore {sub} (used in {where}): {done.stderr[-500:]}"


# ---------------------------------------------------------------- Kubernetes


def test_kustomization_lists_every_manifest() -> None:
    listed = set(yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"])
    on_disk = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == on_disk


def test_every_object_is_well_formed() -> None:
    for obj in k8s_objects():
        assert obj.get("apiVersion") and obj.get("kind"), obj
        assert obj.get("metadata", {}).get("name"), obj
    names = [(o["kind"], o["metadata"]["name"]) for o in k8s_objects()]
    assert len(names) == len(set(names)), "duplicate objects"


def test_schema_validation() -> None:
    """Built-in kinds against the Kubernetes OpenAPI schemas (strict: no unknown fields)."""
    kv = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate")
    checked = 0
    for obj in k8s_objects():
        if "." in obj["apiVersion"].split("/")[0]:
            continue  # CRDs (KEDA): no bundled schema, covered by the structure tests
        kv.validate(obj, kv.latest_version(), strict=True)
        checked += 1
    assert checked >= 9


def test_workloads_have_probes_resources_and_matching_labels() -> None:
    assert set(by_kind("Deployment")) == MEMCORE_SERVICES
    assert set(by_kind("StatefulSet")) == {"redis"}
    for name, wl in workloads().items():
        spec = wl["spec"]
        template_labels = spec["template"]["metadata"]["labels"]
        for key, value in spec["selector"]["matchLabels"].items():
            assert template_labels.get(key) == value, f"{name}: selector does not match"
        for c in containers(wl):
            port_names = {p["name"] for p in c.get("ports", [])}
            for probe in ("livenessProbe", "readinessProbe"):
                assert probe in c, f"{name}: no {probe}"
                port = c[probe].get("httpGet", {}).get("port")
                assert port is None or port in port_names, f"{name}: probe port {port}"
            res = c["resources"]
            assert res["requests"]["cpu"] and res["requests"]["memory"], name
            assert res["limits"]["memory"], name
    beat = by_kind("Deployment")["beat"]["spec"]
    assert beat["replicas"] == 1 and beat["strategy"]["type"] == "Recreate"
    consolidate = containers(by_kind("Deployment")["worker-consolidate"])[0]["args"]
    assert option(consolidate, "--prefetch-multiplier") == "1"


def test_memcore_containers_take_config_from_secret_and_configmap() -> None:
    secrets, configmaps = by_kind("Secret"), by_kind("ConfigMap")
    found = list(memcore_containers())
    assert {name for name, _ in found} == MEMCORE_SERVICES
    for name, c in found:
        assert "command" not in c, f"{name}: use args to keep the image entrypoint"
        refs = {(k, v["name"]) for e in c["envFrom"] for k, v in e.items()}
        assert ("secretRef", "memcore-secrets") in refs, name
        assert ("configMapRef", "memcore-config") in refs, name
    secret = secrets["memcore-secrets"]["stringData"]
    assert "MEMCORE_REDIS_URL" in secret and "@" in secret["MEMCORE_REDIS_URL"], "URL w/ password"
    assert "FLOWER_BASIC_AUTH" in secret
    # Every reference by key resolves.
    for name, wl in workloads().items():
        for c in containers(wl):
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in secrets[ref["name"]]["stringData"], f"{name}: {ref}"
        for vol in wl["spec"]["template"]["spec"].get("volumes", []):
            if "configMap" in vol:
                assert vol["configMap"]["name"] in configmaps, f"{name}: {vol}"


def test_services_select_pods() -> None:
    templates = [wl["spec"]["template"] for wl in workloads().values()]
    for name, svc in by_kind("Service").items():
        selector = svc["spec"]["selector"]
        matching = [
            t for t in templates
            if all(t["metadata"]["labels"].get(k) == v for k, v in selector.items())
        ]
        assert len(matching) == 1, f"service {name} selects {len(matching)} workloads"
        ports = {p["name"] for c in matching[0]["spec"]["containers"] for p in c.get("ports", [])}
        for port in svc["spec"]["ports"]:
            assert port["targetPort"] in ports, f"service {name}: {port['targetPort']}"
    assert by_kind("StatefulSet")["redis"]["spec"]["serviceName"] in by_kind("Service")


def test_redis_statefulset_is_durable() -> None:
    redis = by_kind("StatefulSet")["redis"]
    assert redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    conf = by_kind("ConfigMap")["redis-config"]["data"]["redis.conf"]
    for line in ("appendonly yes", "appendfsync everysec", 'save ""',
                 "maxmemory-policy noeviction"):
        assert re.search(rf"^{line}$", conf, re.M), line
    args = containers(redis)[0]["args"]
    assert "$(REDIS_PASSWORD)" in args, "in-cluster Redis requires the Secret's password"
    _removes_crash_leftovers(containers(redis)[0]["command"])


def _removes_crash_leftovers(entrypoint: list[str]) -> None:
    """Redis starts only after removing a killed save child's temp files, then runs the
    image's own entrypoint with the arguments (docs: erased bytes leave the disk)."""
    script = entrypoint[entrypoint.index("-c") + 1]
    removed, started = script.split(";", 1)
    assert shell_words(removed) == ["rm", "-f", "/data/temp-*.rdb", "/data/temp-*.aof"]
    assert started.split()[:2] == ["exec", "docker-entrypoint.sh"]


def test_keda_scales_ingest_workers_on_the_ingest_list() -> None:
    scaled = by_kind("ScaledObject")["worker-ingest"]
    target = scaled["spec"]["scaleTargetRef"]
    assert target["name"] in by_kind("Deployment") and target["kind"] == "Deployment"
    trigger = scaled["spec"]["triggers"][0]
    assert trigger["type"] == "redis"
    assert trigger["metadata"]["listName"] == "ingest"
    assert int(trigger["metadata"]["listLength"]) > 0
    namespace = yaml.safe_load((K8S / "kustomization.yaml").read_text())["namespace"]
    host = trigger["metadata"]["address"].split(":")[0]
    assert host == f"redis.{namespace}.svc.cluster.local"
    auth = by_kind("TriggerAuthentication")[trigger["authenticationRef"]["name"]]
    for ref in auth["spec"]["secretTargetRef"]:
        assert ref["key"] in by_kind("Secret")[ref["name"]]["stringData"]
    assert scaled["spec"]["minReplicaCount"] >= 1
    assert scaled["spec"]["maxReplicaCount"] > scaled["spec"]["minReplicaCount"]


def test_compose_and_k8s_run_the_same_processes() -> None:
    def key(words: list[str]) -> tuple[str, str | None, str | None]:
        return words[3], option(words, "-Q"), option(words, "--prefetch-multiplier")

    services = compose()["services"]
    for name in CELERY_SERVICES:
        k8s_args = containers(by_kind("Deployment")[name])[0]["args"]
        assert key(services[name]["command"]) == key(k8s_args), name


def test_api_service_serves_and_probes_the_real_routes() -> None:
    """compose and k8s run the same ``memcore serve``; probes hit routes the app has."""
    from memcore.api.app import create_app

    paths = set(create_app(Settings()).openapi()["paths"])
    assert {"/healthz", "/readyz"} <= paths
    help_text = subprocess.run([str(VENV_BIN / "memcore"), "serve", "--help"],
                               capture_output=True, text=True, timeout=60, check=True).stdout
    compose_cmd = compose()["services"]["api"]["command"]
    container = containers(by_kind("Deployment")["api"])[0]
    assert compose_cmd == container["args"], "compose and k8s run the same API command"
    assert compose_cmd[:2] == ["memcore", "serve"]
    for word in compose_cmd[2:]:
        if word.startswith("-"):
            assert word in help_text, f"memcore serve has no {word}"
    port = int(option(compose_cmd, "--port") or 0)
    assert option(compose_cmd, "--host") == "0.0.0.0", "reachable from outside the container"
    assert "--insecure-dev" not in compose_cmd
    health = " ".join(shell_words(compose()["services"]["api"]["healthcheck"]["test"]))
    assert f"127.0.0.1:{port}/readyz" in health
    assert f"{port}:{port}" in compose()["services"]["api"]["ports"][0]
    assert container["ports"][0]["containerPort"] == port
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    service = by_kind("Service")["api"]
    assert service["spec"]["ports"][0]["targetPort"] == container["ports"][0]["name"]
