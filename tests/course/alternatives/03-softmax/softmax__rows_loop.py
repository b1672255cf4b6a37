"""softmax by moving dim to the end, looping over the slices one at a time in Python, and moving it back.
"""
def softmax(x, dim=-1):
    moved = x.movedim(dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = []
    for row in rows:
        if bool(torch.isneginf(row).all()):
            out.append(torch.zeros_like(row))
            continue
        e = torch.exp(row - row.max())
        out.append(e / e.sum())
    result = torch.stack(out) if out else torch.empty_like(rows)
    return result.reshape(moved.shape).movedim(-1, dim)
