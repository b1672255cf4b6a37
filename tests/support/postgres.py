"""A real PostgreSQL server for a test: a throwaway cluster in a temporary folder, made with the
server's own ``initdb`` and ``pg_ctl`` (Debian's ``postgresql``, which ``make test`` installs),
listening on loopback only, trusting local connections, gone when the test is done.

    with throwaway_postgres(tmp_path) as server:
        url = server.url("gradebook")      # postgresql://course@127.0.0.1:PORT/gradebook (created)

PostgreSQL refuses to run as root: as root the cluster belongs to the ``postgres`` system user
(the package creates it), its commands run as that user, and its files live in a folder of
their own under the system's temporary folder (pytest's are private to root, so ``postgres``
could not reach one inside them), removed afterwards."""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

USER = "course"


def server_bin(name: str) -> str:
    """A server program (``initdb``, ``pg_ctl``, ``psql``): Debian keeps them off PATH."""
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed: `make test` installs Debian's postgresql")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    port: int
    data: Path
    run_as: list[str]

    def url(self, database: str, driver: str = "postgresql") -> str:
        """A new database's URL (``driver`` as SQLAlchemy names it: ``postgresql``, ``postgresql+psycopg``)."""
        self.psql(f'CREATE DATABASE "{database}" OWNER {USER}')
        return f"{driver}://{USER}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        done = subprocess.run([*self.run_as, server_bin("psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", database,
                               "-v", "ON_ERROR_STOP=1", "-Atc", sql], capture_output=True, text=True, timeout=60)
        if done.returncode:
            raise RuntimeError(f"psql failed: {done.stderr.strip()}")
        return done.stdout


@contextlib.contextmanager
def throwaway_postgres(folder: Path):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    run_as: list[str] = []
    own = None
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
        folder = own = Path(tempfile.mkdtemp(prefix="throwaway-postgres-"))
        os.chmod(folder, 0o755)
    data, sockets = folder / "pgdata", folder / "pgsock"
    for d in (data, sockets):
        d.mkdir(exist_ok=True)
        if run_as:
            os.chown(d, owner.pw_uid, owner.pw_gid)
    port = _free_port()
    subprocess.run([*run_as, server_bin("initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"],
                   check=True, capture_output=True, timeout=300)
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {sockets} -c fsync=off"
    subprocess.run([*run_as, server_bin("pg_ctl"), "-D", str(data), "-o", options, "-l", str(data / "server.log"), "-w", "start"],
                   check=True, capture_output=True, timeout=300)
    try:
        yield Server(port, data, run_as)
    finally:
        subprocess.run([*run_as, server_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], capture_output=True, timeout=120)
        if own is not None:
            shutil.rmtree(own, ignore_errors=True)


@contextlib.contextmanager
def reachable_folder():
    """A folder the server's own user can reach (pytest's tmp_path lies under a folder only its
    owner may enter, and as root the cluster belongs to the ``postgres`` user)."""
    folder = Path(tempfile.mkdtemp(prefix="pg-"))
    folder.chmod(0o755)
    try:
        yield folder / "pg"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
