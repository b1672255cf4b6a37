"""The sandbox around a kernel, from outside: bubblewrap, the syscall filters, cgroups, the limits
and the leftovers of a dead grader. Imports nothing of the project outside this folder.

    bwrap.py      is bubblewrap usable here; the read-only mounts every sandbox starts from
    seccomp.py    the syscall filters (no sockets but Unix ones; no new namespaces when forked)
    cgroups.py    per-kernel memory and process limits, and killing everything inside
    limits.py     ``Limits`` (CPU-time limits scaled by the machine's measured slowness) and how the command line states them
    leftovers.py  scratch folders and control groups named by their maker's pid; removing a dead grader's
"""
