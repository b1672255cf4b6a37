"""load_torch_weights: splits in_proj_weight along the input dimension (chunks of columns) instead of the rows."""


def load_torch_weights(module, reference):
    if reference.embed_dim != module.d_model or reference.num_heads != module.num_heads:
        raise ValueError("d_model and num_heads must match")
    with torch.no_grad():
        D = module.d_model
        w = reference.in_proj_weight.reshape(D, 3, D)
        module.q_proj.weight.copy_(w[:, 0])
        module.k_proj.weight.copy_(w[:, 1])
        module.v_proj.weight.copy_(w[:, 2])
        module.out_proj.weight.copy_(reference.out_proj.weight)
        if reference.in_proj_bias is not None:
            b_q, b_k, b_v = reference.in_proj_bias.chunk(3)
            module.q_proj.bias.copy_(b_q)
            module.k_proj.bias.copy_(b_k)
            module.v_proj.bias.copy_(b_v)
            module.out_proj.bias.copy_(reference.out_proj.bias)
