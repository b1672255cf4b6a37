"""The capstone needs more than a fixed window (issue 12): on the graded data, with the graded
training (seed, epochs, learning rate), every fixed-window baseline of the grader (window MLPs,
convolutions; course/capstone.py BASELINES) stays below the accuracy threshold, while the
reference TinyTagger, built from the notebook's own attention and positional encoding, passes
it; and the recurrent baseline (RECURRENT_BASELINES, which reads the whole sentence) passes it
too, as page 09 says (issue 26). Run in this process on the CPU, like the grader's
training budget is stated (2 CPU cores)."""
from __future__ import annotations

import torch

from autograder.grading.score import solution_namespace
from course import tagging_data as data
from course import capstone
from course.checks.ch09_capstone import measure_baselines

from tests.support import ROOT


def _reference_accuracy() -> float:
    ns = solution_namespace("09-capstone", ROOT)
    train, test = data.make_splits(capstone.TRAIN_SIZE, capstone.TEST_SIZE, seed=capstone.GRADED_SEED)
    train_ids, train_tags = data.encode(train)
    test_ids, test_tags = data.encode(test)
    ns["set_seed"](capstone.GRADED_SEED)
    model = ns["TinyTagger"](len(data.VOCAB), len(data.TAGS))
    ns["train_tagger"](model, (train_ids, train_tags), capstone.GRADED_EPOCHS, capstone.GRADED_LR)
    model.eval()
    with torch.no_grad():
        return capstone.ambiguous_accuracy(model(test_ids), test_ids, test_tags)


def test_fixed_window_baselines_stay_below_the_threshold_and_the_reference_passes():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        baselines = measure_baselines()
        reference = _reference_accuracy()
    finally:
        torch.set_num_threads(threads)
    report = ", ".join(f"{name} {accuracy:.3f}" for name, accuracy in baselines.items()) + f"; reference TinyTagger {reference:.3f}"
    print(report)
    assert len(baselines) >= 4 and any("window" in n for n in baselines) and any("convolution" in n for n in baselines), report
    best = max(baselines.values())
    assert best < capstone.ACCURACY_THRESHOLD - 0.03, f"a fixed-window baseline comes within 0.03 of the threshold {capstone.ACCURACY_THRESHOLD}: {report}"
    assert reference >= capstone.ACCURACY_THRESHOLD + 0.05, f"the reference tagger does not clear the threshold with a margin: {report}"


def test_baselines_see_no_further_than_stated():
    """The receptive fields the names state: a change k tokens away reaches a +/-w model only for k <= w."""
    for name, build in capstone.BASELINES.items():
        reach = int(name.rsplit("+/-", 1)[1].rstrip(")"))
        torch.manual_seed(0)
        model = build().eval()
        ids = torch.randint(1, len(data.VOCAB), (1, 19))
        with torch.no_grad():
            base = model(ids)
            for k in (reach, reach + 1):
                changed = ids.clone()
                changed[0, 2 + k] = 1 + int(ids[0, 2 + k]) % (len(data.VOCAB) - 1)
                moved = bool((model(changed)[0, 2] - base[0, 2]).abs().max() > 1e-7)
                assert moved == (k == reach), f"{name}: a change {k} tokens away {'reaches' if moved else 'does not reach'} the token"


def test_the_recurrent_baseline_is_kept_apart_sees_the_whole_sentence_and_clears_the_threshold():
    """RECURRENT_BASELINES justify nothing about the threshold (BASELINES are the fixed-window models): they
    are a different set, a change anywhere in the sentence reaches every token, and, trained like the graded
    run, the GRU clears the threshold, as page 09 and chapter 8's erratum say."""
    assert capstone.RECURRENT_BASELINES and not set(capstone.RECURRENT_BASELINES) & set(capstone.BASELINES)
    for name, build in capstone.BASELINES.items():
        kinds = {type(m).__name__ for m in build().modules()}
        assert not kinds & {"RNN", "GRU", "LSTM"}, f"{name} is recurrent: it belongs in RECURRENT_BASELINES"
    for name, build in capstone.RECURRENT_BASELINES.items():
        torch.manual_seed(0)
        model = build().eval()
        ids = torch.randint(1, len(data.VOCAB), (1, 19))
        with torch.no_grad():
            base = model(ids)
            for far in (0, 18):                                  # the first and the last word, 9 and 9 tokens from token 9
                changed = ids.clone()
                changed[0, far] = 1 + int(ids[0, far]) % (len(data.VOCAB) - 1)
                assert (model(changed)[0, 9] - base[0, 9]).abs().max() > 1e-7, f"{name}: token {far} does not reach token 9"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        recurrent = measure_baselines(baselines=capstone.RECURRENT_BASELINES)
    finally:
        torch.set_num_threads(threads)
    print(recurrent)
    assert all(accuracy >= capstone.ACCURACY_THRESHOLD for accuracy in recurrent.values()), (
        f"a recurrent baseline no longer clears the threshold {capstone.ACCURACY_THRESHOLD}: {recurrent}; "
        "page 09 and chapter 8's erratum say that it does")
