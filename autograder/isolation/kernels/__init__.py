"""Kernels: a fresh sandboxed Python per submission (cold) or one forked from a warm zygote, the
programs that run inside them, and the wire between grader and kernel.
Imports ``..sandbox`` and ``..guard``; nothing of the project outside the isolation layer.

    kernel.py          a cold kernel: bubblewrap + a fresh Python (``Kernel``)
    errors.py          what a kernel raises when it cannot answer (``KernelError``, ``KernelTimeout``)
    warmpool.py        warm kernels: a sandboxed zygote that forks one kernel per submission
                       (``start_shared_zygote``/``adopt_shared``: one zygote for several grader processes)
    launch.py          what every sandboxed Python starts from: its code (``RUNNER_FILES``, copied flat),
                       environment and folders; output drains
    kernel_runner.py   runs inside the sandbox: executes cells, answers requests
    runner_capture.py  runs inside the sandbox: what a request prints and shows, captured for its reply
    zygote_runner.py   runs inside the sandbox: the warm zygote
    wire.py            the values the pipes can carry (and, from frames.py, the frames they travel in)
    frames.py          the frames themselves

The files that run inside the sandbox are copied into one folder there and import each other as
plain modules (``import wire``); wire.py imports frames.py relatively here, plainly there.
"""
