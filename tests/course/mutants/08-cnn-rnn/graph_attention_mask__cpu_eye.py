"""graph_attention_mask: adds the self-loops with torch.eye(n, dtype=torch.bool), without device=, so the
mask cannot be formed for an adjacency on a GPU.

Breaks: 08.graph_attention_mask.device
"""
def graph_attention_mask(adjacency):
    if adjacency.dim() != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError("square adjacency expected")
    return adjacency | adjacency.T | torch.eye(adjacency.shape[0], dtype=torch.bool)
