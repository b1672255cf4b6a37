"""`grade --scheduler tls://...` as README "Grading a large class" sets it up on a shared
network: a Dask scheduler and worker started with distributed's TLS options (a certificate
made here with openssl, self-signed: the course's own authority), the grader's certificate
given to `python -m autograder grade` in Dask's configuration (DASK_DISTRIBUTED__COMM__TLS__*
environment variables). The scheduler refuses a client without a certificate and a plain
tcp:// one; the graded class comes back as on this machine, and the grader's per-submission
budgets hold on the worker: a submission whose replies make the grader's work explode fails
alone with status `limit`, its neighbour keeps full marks."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pipeline.test_grader_workers import ASSIGNMENT, GREEDY, _course

pytest.importorskip("distributed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _certificate(folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "grading.pem", folder / "grading-key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=self-attention grading", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=120)
    return cert, key


def _start(args: list[str], log: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, "-m", *args], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    import signal

    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("dask-tls")
    cert, key = _certificate(base)
    tls = ["--tls-ca-file", str(cert), "--tls-cert", str(cert), "--tls-key", str(key)]
    port = _free_port()
    address = f"tls://127.0.0.1:{port}"
    scheduler = _start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port), "--protocol", "tls",
                        "--no-dashboard", *tls], base / "scheduler.log")
    worker = None
    try:
        deadline = time.monotonic() + 120
        while "Scheduler at:" not in (base / "scheduler.log").read_text() and time.monotonic() < deadline:
            assert scheduler.poll() is None, (base / "scheduler.log").read_text()
            time.sleep(0.3)
        worker = _start(["distributed.cli.dask_worker", address, "--nthreads", "1", "--no-dashboard", *tls], base / "worker.log")
        yield {"address": address, "port": port, "cert": cert, "key": key, "base": base}
    finally:
        if worker is not None:
            _stop(worker)
        _stop(scheduler)


def test_the_scheduler_refuses_clients_without_the_certificate(cluster):
    from distributed import Client
    from distributed.security import Security

    cert, key = str(cluster["cert"]), str(cluster["key"])
    with Client(cluster["address"], security=Security(tls_ca_file=cert, tls_client_cert=cert, tls_client_key=key,
                                                      require_encryption=True), timeout=30) as client:
        assert client.scheduler_info()["address"] == cluster["address"]  # the control: with the certificate it answers
    stranger_cert, stranger_key = _certificate(cluster["base"] / "stranger")  # self-signed, not by the course's
    stranger = Security(tls_ca_file=cert, tls_client_cert=str(stranger_cert), tls_client_key=str(stranger_key), require_encryption=True)
    with pytest.raises((OSError, TimeoutError)):
        Client(cluster["address"], security=stranger, timeout=5)
    with pytest.raises((OSError, TimeoutError)):
        Client(f"tcp://127.0.0.1:{cluster['port']}", timeout=5)  # no TLS at all


@pytest.fixture(scope="module")
def graded(cluster):
    """The class graded on the TLS cluster, the grader's certificate in Dask's configuration
    as README shows it (environment variables, read by dask.config)."""
    import dask

    from autograder.classgrade import grade_assignment
    from autograder.isolation import GiB, MiB, Limits

    course = _course(cluster["base"] / "course", {"honest": None, "greedy": GREEDY})
    env_tls = {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(cluster["cert"]),
               "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(cluster["cert"]),
               "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(cluster["key"])}
    saved = {k: os.environ.get(k) for k in env_tls}
    os.environ.update(env_tls)
    dask.config.refresh()
    # as test_grader_workers: replies within the byte limits, the grader's memory budget the limit
    limits = Limits(cell_timeout=60, notebook_timeout=600, memory=4 * GiB, max_reply=512 * MiB, grader_memory=int(0.8 * GiB))
    try:
        report = grade_assignment(ASSIGNMENT, course, limits=limits, create=True, scheduler=cluster["address"], log=lambda m: None)
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        dask.config.refresh()
    return report, cluster["base"] / "worker.log"


def test_grading_over_tls_gives_full_marks_to_the_honest(graded):
    report, worker_log = graded
    assert not report.grader_errors, (report.grader_errors, worker_log.read_text()[-3000:])
    honest = {s.student: s for s in report.students}["honest"]
    assert honest.status == "ok" and honest.score == honest.max_score > 0, (honest.status, honest.failures)


def test_grader_budgets_hold_on_the_worker(graded):
    report, worker_log = graded
    greedy = {s.student: s for s in report.students}["greedy"]
    assert greedy.status == "limit" and greedy.score == 0, (greedy.status, greedy.failures, worker_log.read_text()[-3000:])
    assert any("grader's work on this submission" in r for _, r in greedy.failures), greedy.failures


def test_readme_starts_a_plain_scheduler_on_loopback_only():
    """Every `dask scheduler` that README shows either speaks TLS or listens on 127.0.0.1 alone (a
    plain tcp:// scheduler on every interface runs any reachable stranger's tasks)."""
    from tests.support import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    import re

    shown = re.findall(r"dask scheduler[^`\n]*", readme)
    assert shown, "README shows no dask scheduler command"
    for command in shown:
        assert "--protocol tls" in command or "--host 127.0.0.1" in command, f"README: {command!r} listens beyond loopback without TLS"
