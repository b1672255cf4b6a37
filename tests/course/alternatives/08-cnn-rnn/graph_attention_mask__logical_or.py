"""graph_attention_mask: torch.logical_or twice, self-loops set on a fresh copy with fill_diagonal_."""
def graph_attention_mask(adjacency):
    if adjacency.ndim != 2 or adjacency.size(0) != adjacency.size(1):
        raise ValueError("adjacency must be square")
    mask = torch.logical_or(adjacency, adjacency.transpose(0, 1)).clone()
    return mask.fill_diagonal_(True)
