"""greedy_generate that preallocates the output (B, T + max_new_tokens) and fills one column per step, feeding the model the column it just wrote."""


@torch.no_grad()
def greedy_generate(model, prompt_ids, max_new_tokens):
    B, T = prompt_ids.shape
    out = torch.empty(B, T + max_new_tokens, dtype=torch.long, device=prompt_ids.device)
    out[:, :T] = prompt_ids
    if max_new_tokens == 0:
        return out
    logits, cache = model(prompt_ids, cache=None)
    for t in range(T, T + max_new_tokens):
        out[:, t] = logits[:, -1, :].argmax(-1)
        if t + 1 < T + max_new_tokens:
            logits, cache = model(out[:, t:t + 1], cache=cache)
    return out
