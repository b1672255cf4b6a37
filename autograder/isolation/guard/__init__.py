"""The guard: what the student's code cannot undo. Its hook runs inside the sandbox, armed before
student code; the grader reads its authenticated records. Imports nothing of the project.

    guard.py      runs inside the sandbox: the audit hook that refuses forbidden operators at torch's
                  dispatcher and the ways into the machinery, with its parts:
    guard_arguments.py  what a graded call changes in place (its arguments' pictures, before and after)
    guard_devices.py    the device watch's events (its findings, and whether it stayed on the mode stack)
    guard_signals.py    no student code in the guard's frames (the collector off, signal handlers refused)
    guardlog.py   the grader's reading of the guard's authenticated records (what decides, not the reply)
    recorder.py   which torch routines a call reaches, by any name (forbidden-routine checks; both sides), and
                  the device watch of a probe without a GPU (its findings become the guard's records)

guard.py, its parts and recorder.py are copied into the sandbox beside the kernel's runner
(``kernels/launch.py``: ``RUNNER_FILES``) and imported there as plain modules: guard.py imports its
parts, as plain modules there and from this package elsewhere; none imports anything else of the project.
"""
