"""load_torch_weights: takes the query bias from the key block of in_proj_bias (an off-by-one block index).

Breaks: 06.load_torch_weights.values
"""


def load_torch_weights(module, reference):
    if reference.embed_dim != module.d_model or reference.num_heads != module.num_heads:
        raise ValueError("d_model and num_heads must match")
    d = module.d_model
    with torch.no_grad():
        module.q_proj.weight.copy_(reference.in_proj_weight[:d])
        module.k_proj.weight.copy_(reference.in_proj_weight[d : 2 * d])
        module.v_proj.weight.copy_(reference.in_proj_weight[2 * d :])
        module.out_proj.weight.copy_(reference.out_proj.weight)
        if reference.in_proj_bias is not None:
            module.q_proj.bias.copy_(reference.in_proj_bias[d : 2 * d])  # should be [:d]
            module.k_proj.bias.copy_(reference.in_proj_bias[d : 2 * d])
            module.v_proj.bias.copy_(reference.in_proj_bias[2 * d :])
            module.out_proj.bias.copy_(reference.out_proj.bias)
