"""stack_head_projections that preallocates the weight (dtype and device of the input) and fills each head's rows."""


def stack_head_projections(per_head):
    if len(per_head) == 0:
        raise ValueError("per_head must not be empty")
    d_model, d_head = per_head[0].shape
    for w in per_head:
        if tuple(w.shape) != (d_model, d_head):
            raise ValueError("matrices of different shapes")
    W = torch.empty(len(per_head) * d_head, d_model, dtype=per_head[0].dtype, device=per_head[0].device)
    for h, w in enumerate(per_head):
        W[h * d_head : (h + 1) * d_head] = w.T
    return W
