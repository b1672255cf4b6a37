"""Hidden tests for every assignment, as named checks (see ``autograder.checking`` for the framework)."""
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
    describe,
    expect_equal,
    expect_tensor,
    get_check,
    load_all_checks,
    run_check,
)
