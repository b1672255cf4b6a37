"""stack_head_projections: transposes each head's matrix in place (w.t_()), changing the caller's matrices.

Breaks: 06.stack_head_projections.unchanged
"""


def stack_head_projections(per_head):
    if len(per_head) == 0 or any(w.shape != per_head[0].shape for w in per_head):
        raise ValueError("need one matrix per head, all of the same shape")
    return torch.cat([w.t_() for w in per_head], dim=0)
