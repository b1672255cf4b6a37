"""softmax: calls the forbidden torch.softmax (and patches the all -inf case)."""
def softmax(x, dim=-1):
    return torch.nan_to_num(torch.softmax(x, dim=dim), nan=0.0)
