"""load_torch_weights: does not check the number of heads; equal d_model with other heads loads silently and disagrees.

Breaks: 06.load_torch_weights.errors
"""


def load_torch_weights(module, reference):
    if reference.embed_dim != module.d_model:
        raise ValueError("d_model must match")
    with torch.no_grad():
        w_q, w_k, w_v = reference.in_proj_weight.chunk(3, dim=0)
        module.q_proj.weight.copy_(w_q)
        module.k_proj.weight.copy_(w_k)
        module.v_proj.weight.copy_(w_v)
        module.out_proj.weight.copy_(reference.out_proj.weight)
        if reference.in_proj_bias is not None:
            b_q, b_k, b_v = reference.in_proj_bias.chunk(3)
            module.q_proj.bias.copy_(b_q)
            module.k_proj.bias.copy_(b_k)
            module.v_proj.bias.copy_(b_v)
            module.out_proj.bias.copy_(reference.out_proj.bias)
