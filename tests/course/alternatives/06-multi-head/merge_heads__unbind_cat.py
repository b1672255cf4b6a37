"""merge_heads by concatenating the heads along the features: torch.cat(x.unbind(1), dim=-1)."""


def merge_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)
