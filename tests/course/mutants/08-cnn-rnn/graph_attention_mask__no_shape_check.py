"""graph_attention_mask: no shape check, so a non-square adjacency gives a broadcasting error instead of ValueError.

Breaks: 08.graph_attention_mask.errors
"""
def graph_attention_mask(adjacency):
    return adjacency | adjacency.T | torch.eye(adjacency.shape[0], dtype=torch.bool, device=adjacency.device)
