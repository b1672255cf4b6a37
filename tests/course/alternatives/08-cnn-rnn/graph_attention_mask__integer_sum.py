"""graph_attention_mask: counts A + A^T + I in integers and keeps the positive entries."""
def graph_attention_mask(adjacency):
    if len(adjacency.shape) != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError("a square 2-D adjacency is required")
    a = adjacency.long()
    return (a + a.T + torch.eye(a.shape[0], dtype=torch.long, device=a.device)) > 0
