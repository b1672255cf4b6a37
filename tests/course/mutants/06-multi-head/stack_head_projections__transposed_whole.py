"""stack_head_projections: transposes the whole side-by-side matrix with the heads in reverse order (heads counted from the end).

Breaks: 06.stack_head_projections.values
"""


def stack_head_projections(per_head):
    if len(per_head) == 0 or any(w.shape != per_head[0].shape for w in per_head):
        raise ValueError("need one matrix per head, all of the same shape")
    return torch.cat(list(per_head)[::-1], dim=1).T
