"""A correct answer's verdict must not depend on the seed a grading run draws.

In CI, a wrong 06 answer once lost 2 points fewer than its twin with the same forward pass: the
check ``mask_dominated`` built its loud token's query from W_q (2000 e) with W_q e = 0 only in float64,
so float32 rounding left the loud and the quiet sentences with queries up to 4e-4 apart (the largest of
200 draws), and for about 1 seed in 60 even the reference answer's weights differed by more than the
tolerance. The check now picks W_q so that the product is exactly 0 in float32; these tests hold it
there, and check that ``tools.seed_sweep`` (the sweep that found it) reports a seed-dependent verdict."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from course.checks.ch06_multi_head.attention import _rows_summing_to_zero
from tools import seed_sweep

# seeds for which the float64-only construction failed the reference answer (found by the sweep)
ONCE_FAILED = (15, 36, 188)


def test_the_loud_tokens_projection_is_exactly_zero_in_float32():
    """W (2000 e) == 0 to the last bit whichever way an answer computes the projection."""
    gen = torch.Generator().manual_seed(0)
    for d in (4, 8, 16, 64):
        w = _rows_summing_to_zero(torch.randn(d, d, generator=gen, dtype=torch.float64) / d ** 0.5)
        w32 = w.float()
        loud = torch.full((3, d), 2000.0)
        for how, got in (("F.linear", F.linear(loud, w32)), ("x @ W.T", loud @ w32.T),
                         ("einsum", torch.einsum("nd,ed->ne", loud, w32)),
                         ("products summed", (loud.unsqueeze(1) * w32).sum(-1)),
                         ("addmm with a bias", torch.addmm(torch.full((d,), 3.0), loud, w32.T) - 3.0)):
            assert torch.equal(got, torch.zeros_like(got)), f"d={d}, {how}: {got.abs().max().item():.3g} from zero"


def test_correct_answers_pass_mask_dominated_where_they_once_failed():
    subjects = [s for s in seed_sweep.answers("06-multi-head") if s[2] is None or "MultiHeadSelfAttention" in s[2]]
    assert len(subjects) >= 4, [s[0] for s in subjects]
    failed = seed_sweep.sweep("06-multi-head", ONCE_FAILED, subjects, only={"06.MultiHeadSelfAttention.mask_dominated"})
    assert not failed, failed


PLANTED = '''
def gram_matrix(X):
    """Right unless the first entry is positive: the verdict depends on the drawn inputs."""
    G = X @ X.mT
    return G + 1 if X.flatten()[0] > 0 else G
'''


def test_the_sweep_reports_a_seed_dependent_verdict():
    reference = seed_sweep.answers("02-inner-products")[0][1]
    planted = dict(reference)
    exec(PLANTED, planted)
    seeds = range(8)
    failed = seed_sweep.sweep("02-inner-products", seeds, [("planted", planted, {"gram_matrix"}),
                                                          ("reference", reference, {"gram_matrix"})])
    assert not [k for k in failed if k[0] == "reference"], failed
    sometimes = {k: v for k, v in failed.items() if 0 < len(v) < len(seeds)}
    assert sometimes, f"no check failed the planted answer for some seeds only: {failed}"
