"""graph_attention_mask: adds float matrices (A + A^T + I) instead of a boolean OR.

Breaks: 08.graph_attention_mask.dtype
"""
def graph_attention_mask(adjacency):
    if adjacency.dim() != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError("square adjacency expected")
    a = adjacency.float()
    return (a + a.T + torch.eye(a.shape[0], device=a.device)).clamp(max=1)
