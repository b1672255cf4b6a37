"""graph_attention_mask: forgets the self-loops (i == j).

Breaks: 08.graph_attention_mask.values
"""
def graph_attention_mask(adjacency):
    if adjacency.dim() != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError("square adjacency expected")
    return adjacency | adjacency.T
