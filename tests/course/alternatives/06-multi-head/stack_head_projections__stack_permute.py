"""stack_head_projections with torch.stack, permute and reshape."""


def stack_head_projections(per_head):
    if not per_head:
        raise ValueError("empty list")
    if len({tuple(w.shape) for w in per_head}) != 1:
        raise ValueError("all heads need the same (d_model, d_head)")
    W = torch.stack(list(per_head))  # (H, d_model, d_head)
    H, d_model, d_head = W.shape
    return W.permute(0, 2, 1).reshape(H * d_head, d_model)
