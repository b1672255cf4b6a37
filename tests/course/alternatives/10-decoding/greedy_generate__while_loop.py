"""greedy_generate as a while loop that always feeds the model whatever it has not seen yet (the prompt first, then one token), with a list of columns."""


def greedy_generate(model, prompt_ids, max_new_tokens):
    columns, unseen, cache = [prompt_ids], prompt_ids, None
    while len(columns) - 1 < max_new_tokens:
        logits, cache = model(unseen, cache=cache)
        unseen = torch.argmax(logits[:, -1:], dim=-1)  # (B, 1)
        columns.append(unseen)
    return torch.cat(columns, dim=1)
