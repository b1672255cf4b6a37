"""stack_head_projections: no ValueError; heads of different d_head stack silently and an empty list fails inside torch.cat with a RuntimeError.

Breaks: 06.stack_head_projections.errors
"""


def stack_head_projections(per_head):
    return torch.cat([w.T for w in per_head], dim=0)
