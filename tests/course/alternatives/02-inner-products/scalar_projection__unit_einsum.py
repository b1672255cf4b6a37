"""scalar_projection: a dotted with the unit vector along b, via einsum after broadcasting."""
def scalar_projection(a, b):
    a, b = torch.broadcast_tensors(a, b)
    unit = b / b.norm(dim=-1, keepdim=True)
    return torch.einsum("...d,...d->...", a, unit)
