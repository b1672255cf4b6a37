"""Messages that name the root cause (issue 35): a graded function that calls another graded function
of its notebook and fails because that helper is wrong (wrong values, NaN, an exception) says so and
names the helper's clause ("... your `causal_mask` ... fails `10.causal_mask.values` ... fix it first");
a NaN or exception that comes out of a helper is blamed on the helper. Each case plants a broken helper
(one of the chapter's mutants of the callee) beside a correct caller that calls it, in process, and reads
the caller's failure message. The caller's own mistakes, with a correct helper, never blame the helper."""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder.checking import CheckFailure
from course.checks import run_check

HERE = Path(__file__).resolve().parent
MUTANTS, ALTERNATIVES = HERE / "mutants", HERE / "alternatives"


def _failure(namespace: dict, check: str, *files: Path) -> str | None:
    """The message of ``check`` on the reference answers with ``files`` (answers in another style,
    mutants) run into them, or None when it passes."""
    for f in files:
        exec(compile(f.read_text(encoding="utf-8"), str(f), "exec"), namespace)
    try:
        run_check(check, namespace)
    except CheckFailure as exc:
        return str(exc)
    return None


# (chapter, correct caller that calls the helper, broken helper, the caller's checks, what the message names)
BLAMES = [
    ("03-softmax", "attention_weights__einsum", "softmax__no_max_subtraction",
     ["03.attention_weights.stability"], ["NaN", "your `softmax`", "`03.softmax.stability`", "fix it first"]),
    ("03-softmax", "simple_self_attention__token_loop", "softmax__normalises_everything",
     ["03.simple_self_attention.values"], ["your `softmax`", "`03.softmax.values`", "fix it first"]),
    ("10-decoding", "CausalSelfAttention__uses_causal_mask", "causal_mask__excludes_itself",
     ["10.CausalSelfAttention.values", "10.CausalSelfAttention.gqa"], ["NaN", "your `causal_mask`", "`10.causal_mask.values`", "fix it first"]),
    ("10-decoding", "CausalSelfAttention__uses_causal_mask", "causal_mask__upper_triangle",
     ["10.CausalSelfAttention.values", "10.CausalSelfAttention.continue"], ["your `causal_mask`", "`10.causal_mask.values`", "fix it first"]),
    ("10-decoding", "blockwise_attention__causal_mask_rows", "causal_mask__excludes_itself",
     ["10.blockwise_attention.causal"], ["NaN", "your `causal_mask`", "`10.causal_mask.values`", "fix it first"]),
    ("08-cnn-rnn", "conv1d_via_attention__stacked_heads", "shift_attention_matrix__wraps_around",
     ["08.conv1d_via_attention.values"], ["your `shift_attention_matrix`", "`08.shift_attention_matrix.values`", "offset", "fix it first"]),
    ("07-positional-encoding", "PositionalEncoding__functional_dropout", "sinusoidal_positional_encoding__sin_cos_swapped",
     ["07.PositionalEncoding.buffer_values", "07.PositionalEncoding.forward"],
     ["your `sinusoidal_positional_encoding`", "`07.sinusoidal_positional_encoding.values`", "fix it first"]),
    ("05-scaling", "SelfAttention__keyword_mask", "scaled_dot_product_attention__nan_fully_masked",
     ["05.SelfAttention.mask"], ["NaN", "your `scaled_dot_product_attention`", "`05.scaled_dot_product_attention.fully_masked`", "fix it first"]),
    ("05-scaling", "SelfAttention__keyword_mask", "scaled_dot_product_attention__no_scale",
     ["05.SelfAttention.values"], ["your `scaled_dot_product_attention`", "`05.scaled_dot_product_attention.values`", "fix it first"]),
    ("04-queries-keys-values", "self_attention__from_the_parts", "project_qkv__swapped_order",
     ["04.self_attention.values"], ["your `project_qkv`", "`04.project_qkv.values`", "fix it first"]),
    ("04-queries-keys-values", "self_attention__from_the_parts", "dot_product_scores__no_transpose",
     ["04.self_attention.values"], ["your `dot_product_scores`", "`04.dot_product_scores.values`", "fix it first"]),
    ("04-queries-keys-values", "self_attention__from_the_parts", "attend__naive_softmax",
     ["04.self_attention.stable"], ["your `attend`", "`04.attend.stable`", "fix it first"]),
    ("04-queries-keys-values", "self_attention__from_the_parts", "attend__float32",
     ["04.self_attention.dtype_device"], ["your `attend`", "`04.attend.dtype_device`", "fix it first"]),
    ("06-multi-head", "MultiHeadSelfAttention__uses_split_merge", "split_heads__interleaved",
     ["06.MultiHeadSelfAttention.values", "06.MultiHeadSelfAttention.weights"], ["your `split_heads`", "`06.split_heads.values`", "fix it first"]),
    ("06-multi-head", "MultiHeadSelfAttention__uses_split_merge", "merge_heads__no_transpose",
     ["06.MultiHeadSelfAttention.values"], ["your `merge_heads`", "`06.merge_heads.values`", "fix it first"]),
    ("09-capstone", "TinyTagger__functional_blocks", "MultiHeadSelfAttention__mask_inverted",
     ["09.TinyTagger.padding"], ["your `MultiHeadSelfAttention`", "`09.MultiHeadSelfAttention.mask`", "fix it first"]),
]


@pytest.mark.parametrize("assignment,caller,helper,checks,named", BLAMES, ids=[f"{a[:2]}/{c.split('__')[0]}-{h}" for a, c, h, _, _ in BLAMES])
def test_a_broken_helper_is_blamed_in_its_caller_s_message(assignment, caller, helper, checks, named, namespaces):
    for check in checks:
        why = _failure(namespaces(assignment), check, ALTERNATIVES / assignment / f"{caller}.py", MUTANTS / assignment / f"{helper}.py")
        assert why is not None, f"{check} passed a caller whose helper {helper} is wrong"
        missing = [n for n in named if n not in why]
        assert not missing, f"{check}: the message does not name {missing}: {why}"


# (chapter, a caller's own mistake beside the helper (a correct one), the checks that fail, the helper's name)
OWN_MISTAKES = [
    ("03-softmax", "attention_weights__softmax_over_columns", ["03.attention_weights.values"], "softmax"),
    ("10-decoding", "CausalSelfAttention__no_causal_mask", ["10.CausalSelfAttention.values"], "causal_mask"),
    ("10-decoding", "blockwise_attention__top_left_causal", ["10.blockwise_attention.causal"], "causal_mask"),
    ("08-cnn-rnn", "conv1d_via_attention__float32_shift", ["08.conv1d_via_attention.dtype"], "shift_attention_matrix"),
    ("07-positional-encoding", "PositionalEncoding__adds_last_rows", ["07.PositionalEncoding.forward"], "sinusoidal_positional_encoding"),
    ("05-scaling", "SelfAttention__unscaled_without_mask", ["05.SelfAttention.values"], "scaled_dot_product_attention"),
    ("04-queries-keys-values", "self_attention__softmax_over_queries", ["04.self_attention.values"], "attend"),
    ("06-multi-head", "MultiHeadSelfAttention__merge_without_transpose", ["06.MultiHeadSelfAttention.values"], "merge_heads"),
    ("09-capstone", "TinyTagger__no_padding_mask", ["09.TinyTagger.padding"], "MultiHeadSelfAttention"),
]


@pytest.mark.parametrize("assignment,mutant,checks,helper", OWN_MISTAKES, ids=[f"{a[:2]}/{m}" for a, m, _, _ in OWN_MISTAKES])
def test_a_caller_s_own_mistake_does_not_blame_a_correct_helper(assignment, mutant, checks, helper, namespaces):
    for check in checks:
        why = _failure(namespaces(assignment), check, MUTANTS / assignment / f"{mutant}.py")
        assert why is not None and "fix it first" not in why and f"`{helper}`" not in why, why


def test_10_a_cache_joined_on_the_wrong_axis_is_named_and_costs_no_dtype_point(namespaces):
    """The reported case: torch.cat of the cache along the heads' axis. The clauses that grade the
    cache fail naming the cache and both axes; the dtype and unchanged clauses, which need a continued
    call only to read its dtype or its inputs, do not fail for it (the continuation fails in float32 too)."""
    wrong_axis = MUTANTS / "10-decoding" / "CausalSelfAttention__cache_wrong_axis.py"
    for check in ("10.CausalSelfAttention.cache", "10.CausalSelfAttention.continue"):
        why = _failure(namespaces("10-decoding"), check, wrong_axis)
        assert why is not None and "cache is joined along the wrong axis" in why and "along dim 1" in why and "dim=2" in why, why
    for check in ("10.CausalSelfAttention.dtype", "10.CausalSelfAttention.unchanged"):
        assert _failure(namespaces("10-decoding"), check, wrong_axis) is None, check
