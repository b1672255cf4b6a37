"""graph_attention_mask: requires an edge in both directions (AND instead of OR).

Breaks: 08.graph_attention_mask.values
"""
def graph_attention_mask(adjacency):
    if adjacency.dim() != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError("square adjacency expected")
    return (adjacency & adjacency.T) | torch.eye(adjacency.shape[0], dtype=torch.bool, device=adjacency.device)
