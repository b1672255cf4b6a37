"""graph_attention_mask: writes the self-loops into the caller's adjacency (adjacency.fill_diagonal_(True)).

Breaks: 08.graph_attention_mask.unchanged
"""
def graph_attention_mask(adjacency):
    if adjacency.dim() != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError("square adjacency expected")
    adjacency.fill_diagonal_(True)
    return adjacency | adjacency.T
