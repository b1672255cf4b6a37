"""stack_head_projections: returns W.cpu() "so it can be loaded into any module", which moves GPU weights to the CPU.

Breaks: 06.stack_head_projections.device
"""


def stack_head_projections(per_head):
    if len(per_head) == 0 or any(w.shape != per_head[0].shape for w in per_head):
        raise ValueError("need one matrix per head, all of the same shape")
    return torch.cat([w.T for w in per_head], dim=0).cpu()
