"""Hidden tests for every assignment, as named checks (see ``autograder.checking`` for the framework).
Imports the framework and the course's device rule, which it hands to the framework (``DEVICE_RULE``)."""
from autograder.checking import (  # noqa: F401
    Check,
    Clause,
    CheckFailure,
    Context,
    LocalContext,
    check,
    checks_for,
    clauses,
    contract,
    course_device,
    call_leaves_unchanged,
    describe,
    expect_dtype,
    expect_equal,
    expect_tensor,
    expect_unchanged,
    get_check,
    load_all_checks,
    run_check,
)
from course.device_rule import pick_device as DEVICE_RULE  # noqa: F401 - the device checks run on (``autograder.checking.course_device``)
