"""stack_head_projections: concatenates the per-head matrices side by side, (d_model, H*d_head), the layout for x @ W, not the nn.Linear weight.

Breaks: 06.stack_head_projections.values
"""


def stack_head_projections(per_head):
    if len(per_head) == 0 or any(w.shape != per_head[0].shape for w in per_head):
        raise ValueError("need one matrix per head, all of the same shape")
    return torch.cat(list(per_head), dim=1)
