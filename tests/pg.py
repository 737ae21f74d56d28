"""A real Postgres server for the tests: ``initdb`` and ``pg_ctl`` in a temporary folder, on a free loopback port.

One server per test process (pytest-xdist worker), started on first use and stopped at exit; each test gets a
database of its own (``fresh_database``). Postgres refuses to run as root, so as root the server runs as the
``postgres`` user the Debian package makes. Without Postgres binaries the tests that need them are skipped with a
sentence saying what to install (CI installs them: .ci/run).

    url = postgres_url()              # postgresql://workbench@127.0.0.1:PORT/wb_3f2a...
"""

from __future__ import annotations

import atexit
import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

SUPERUSER = "workbench"
_SERVER: "PostgresServer | None" = None


def postgres_bin() -> Path | None:
    """The folder of initdb/pg_ctl: PATH, else Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One throw-away cluster: trust authentication on 127.0.0.1 only, fsync off (tests need no durability)."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="workbench-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
            os.chmod(self.dir, 0o755)

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.dir)

    def start(self) -> "PostgresServer":
        done = self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
                         "--locale=C", "--no-sync")
        if done.returncode:
            raise RuntimeError(f"initdb failed: {done.stderr[-2000:]}")
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        done = self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.dir / "server.log"),
                         "-w", "-t", "60", "start")
        if done.returncode:
            log = (self.dir / "server.log").read_text(errors="replace")[-2000:] if (self.dir / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stderr[-2000:]} {log}")
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = name or f"wb_{secrets.token_hex(6)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def server() -> PostgresServer:
    """This process's server, started on first use (skips the test when no Postgres is installed)."""
    global _SERVER
    if _SERVER is None:
        bindir = postgres_bin()
        if bindir is None:
            pytest.skip("no Postgres binaries (initdb, pg_ctl) on this machine: install the postgresql package "
                        "(Debian: apt-get install postgresql); CI does")
        _SERVER = PostgresServer(bindir).start()
        atexit.register(_SERVER.stop)
    return _SERVER


def postgres_url() -> str:
    """A fresh, empty database on this process's server."""
    return server().create_database()


@pytest.fixture
def pg_url() -> str:
    return postgres_url()


def benchmark_url() -> str:
    """For benchmarks/: WORKBENCH_BENCH_PG (a server of your own), else a fresh database on a throw-away server."""
    if os.environ.get("WORKBENCH_BENCH_PG"):
        return os.environ["WORKBENCH_BENCH_PG"]
    if postgres_bin() is None:
        raise SystemExit("no Postgres: install the postgresql package or set WORKBENCH_BENCH_PG to a database URL")
    return postgres_url()
