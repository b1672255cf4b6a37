"""graph_attention_mask: keeps edges in their stored direction only (no transpose).

Breaks: 08.graph_attention_mask.values
"""
def graph_attention_mask(adjacency):
    if adjacency.dim() != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError("square adjacency expected")
    return adjacency | torch.eye(adjacency.shape[0], dtype=torch.bool, device=adjacency.device)
