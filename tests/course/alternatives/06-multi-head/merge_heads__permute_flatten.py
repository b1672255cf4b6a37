"""merge_heads with permute, contiguous and view."""


def merge_heads(x):
    B, H, N, Dh = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(B, N, H * Dh)
