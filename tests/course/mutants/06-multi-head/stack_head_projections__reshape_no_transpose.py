"""stack_head_projections: stacks the heads and reshapes (H, d_model, d_head) straight to (H*d_head, d_model), without transposing each head's matrix.

Breaks: 06.stack_head_projections.values
"""


def stack_head_projections(per_head):
    if len(per_head) == 0 or any(w.shape != per_head[0].shape for w in per_head):
        raise ValueError("need one matrix per head, all of the same shape")
    d_model, d_head = per_head[0].shape
    return torch.stack(list(per_head)).reshape(len(per_head) * d_head, d_model)
