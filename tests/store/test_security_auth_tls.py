"""Redis AUTH and TLS through the URL, end to end, and secrets that never leak.

AUTH: ``redis://:<password>@host:port/0``. TLS: ``rediss://...?ssl_cert_reqs=required&
ssl_ca_certs=<ca.pem>`` (workers/config.py turns the query into Celery's
``broker_use_ssl`` / ``redis_backend_use_ssl``). The secret scan runs a workload with a
password-protected Redis and ``MEMCORE_OPENAI_API_KEY`` set to a sentinel, against a
local OpenAI-compatible server, then searches worker logs, raw broker messages (the
args Flower shows), every Redis key (results, audit stream) and the AOF on disk.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from memcore.client.client import Client
from memcore.local.redis_server import free_port
from memcore.messaging import task_names
from tests.support.test_reliability_common import all_values, cluster, turn_messages
from tests.workers.test_reliability_models import Answer, completion, good_answer, model_server

PASSWORD = "pw-SENTINEL-7f3a9c2e"
API_KEY = "sk-SENTINEL-0c9d8e7f6a5b"


def _ingest_and_search(client: Client, ns: str, turns: int) -> int:
    ids = client.add(ns, turn_messages(0, turns, 1))
    client.wait(ids, timeout=120)
    return len(list(client.store.records.iter_memories(ns)))


def test_auth_end_to_end(tmp_path: Path) -> None:
    with cluster(tmp_path / "logs", password=PASSWORD) as c:
        port = c.server.port
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=port).ping()
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis.from_url(f"redis://:wrong@127.0.0.1:{port}/0").ping()
        c.spawn("ingest", "ingest", 1)
        c.wait_ready({"ingest"})
        client = Client(c.url)
        stored = _ingest_and_search(client, "auth", 20)
        print(f"\n[redis AUTH] no password and a wrong one refused; 20 turns through a worker "
              f"with the password in the URL: {stored} facts stored")
        assert stored == 20
        client.close()


def _certs(d: Path) -> Path:
    """A throwaway CA and a server certificate for 127.0.0.1 (openssl)."""
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
        "-days", "1", "-subj", "/CN=memcore-test-ca")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=127.0.0.1")
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "1", "-extfile", "ext.cnf")
    return d / "ca.crt"


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed for the certs")
def test_tls_end_to_end(tmp_path: Path) -> None:
    d = tmp_path / "tls"
    d.mkdir()
    ca = _certs(d)
    tls_port = free_port()
    extra = ["--tls-port", str(tls_port), "--tls-cert-file", str(d / "server.crt"),
             "--tls-key-file", str(d / "server.key"), "--tls-ca-cert-file", str(ca),
             "--tls-auth-clients", "no"]
    url = (f"rediss://:{PASSWORD}@127.0.0.1:{tls_port}/0"
           f"?ssl_cert_reqs=required&ssl_ca_certs={ca}")
    # The plain port stays open only for the harness' readiness check; every memcore
    # process below (client, worker, broker, results) speaks TLS.
    with cluster(tmp_path / "logs", password=PASSWORD, redis_extra=extra, url=url) as c:
        with pytest.raises(redis.exceptions.ConnectionError):  # a plain client on the TLS port
            redis.Redis(port=tls_port, password=PASSWORD, socket_timeout=2).ping()
        with pytest.raises(redis.exceptions.ConnectionError):  # TLS without our CA: unverified
            redis.Redis.from_url(f"rediss://:{PASSWORD}@127.0.0.1:{tls_port}/0"
                                 "?ssl_cert_reqs=required").ping()
        c.spawn("ingest", "ingest", 1)
        c.wait_ready({"ingest"})
        client = Client(url)
        stored = _ingest_and_search(client, "tls", 20)
        clients = c.server.client().client_list()
        tls_conns = [x for x in clients if int(x.get("laddr", ":0").rsplit(":", 1)[1]) == tls_port]
        print(f"\n[redis TLS] rediss:// with a throwaway CA: plain and unverified clients "
              f"refused; 20 turns through a worker: {stored} facts stored; {len(tls_conns)} of "
              f"{len(clients)} server connections on the TLS port")
        assert stored == 20
        assert len(tls_conns) == len(clients) - 1  # all but this check's own plain connection
        client.close()


def test_secrets_never_leak(tmp_path: Path) -> None:
    calls = {"n": 0}

    def answer(body: dict[str, Any]) -> Answer:
        calls["n"] += 1
        if calls["n"] == 2:  # one failure: retries and error paths get logged too
            return 500, json.dumps({"error": {"message": "scripted failure"}}), 0.0
        try:
            return 200, completion(good_answer(body)), 0.0
        except (IndexError, KeyError):  # a prompt the canned answers do not cover
            return 500, json.dumps({"error": {"message": "not scripted"}}), 0.0

    with model_server(answer) as model_url:
        env = {"MEMCORE_OPENAI_API_KEY": API_KEY, "MEMCORE_OPENAI_BASE_URL": model_url,
               "MEMCORE_EXTRACTOR": "auto", "MEMCORE_MODEL_MAX_RETRIES": "2"}
        with cluster(tmp_path / "logs", password=PASSWORD, env=env) as c:
            client = Client(c.url)
            r = c.server.client()
            r.execute_command("AUTH", PASSWORD)
            ns = "secrets"
            # Enqueue before any worker runs, so the raw broker messages can be read.
            ids = client.add(ns, [{"role": "user", "id": f"s{i}", "content": f"I keep {i} bees"}
                                  for i in range(12)])
            ids += [client.celery.send_task(task_names.INGEST, args=[{"namespace": "bad ns"}],
                                            queue="ingest").id]  # a failing task: a traceback
            broker = b"\n".join(r.lrange("ingest", 0, -1))
            c.spawn("ingest", "ingest", 1, loglevel="DEBUG")
            c.spawn("consolidate", "consolidate", 1, loglevel="INFO")
            c.wait_ready({"ingest", "consolidate"})
            client.wait(ids[:-1], timeout=120)
            with pytest.raises(Exception, match="namespace"):
                client.wait(ids[-1:], timeout=60)
            client.consolidate(ns, timeout=120)  # merger calls too
            keys = b"\n".join(v for _, v in all_values(r))
            audit = b"\n".join(v for k, v in all_values(r, "mc:{secrets}:audit*"))
            c.stack.stop()
            logs = c.logs().encode()
            aof = b"".join(p.read_bytes() for p in c.server.directory.rglob("*.aof*")
                           if p.is_file())
            places = {"worker logs": logs, "broker messages (args, argsrepr)": broker,
                      "Redis keys (results, audit, data)": keys, "audit stream": audit,
                      "AOF on disk": aof}
            leaks = {name: [s for s in (PASSWORD, API_KEY) if s.encode() in blob]
                     for name, blob in places.items()}
            sizes = ", ".join(f"{name} {len(blob):,} B" for name, blob in places.items())
            print(f"\n[secrets] {calls['n']} model calls with the sentinel key, password-"
                  f"protected Redis; scanned {sizes}: leaks {leaks}")
            assert calls["n"] >= 2, "the workload reached the model server"
            assert len(logs) > 1000 and len(broker) > 1000 and audit
            assert all(not v for v in leaks.values()), leaks
            client.close()
