"""load_torch_weights: sets param.data to the reference's tensors, so the module shares memory with nn.MultiheadAttention (training one changes the other).

Breaks: 06.load_torch_weights.in_place
"""


def load_torch_weights(module, reference):
    if reference.embed_dim != module.d_model or reference.num_heads != module.num_heads:
        raise ValueError("d_model and num_heads must match")
    w_q, w_k, w_v = reference.in_proj_weight.data.chunk(3, dim=0)
    module.q_proj.weight.data, module.k_proj.weight.data, module.v_proj.weight.data = w_q, w_k, w_v
    module.out_proj.weight.data = reference.out_proj.weight.data
    if reference.in_proj_bias is not None:
        b_q, b_k, b_v = reference.in_proj_bias.data.chunk(3)
        module.q_proj.bias.data, module.k_proj.bias.data, module.v_proj.bias.data = b_q, b_k, b_v
        module.out_proj.bias.data = reference.out_proj.bias.data
