# exercise: greedy_decode · verdict: correct · for loop, append, then break at eos
# ruff: noqa: F821 (np and softmax are the notebook's)
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        scores = model(ids)  # (len(ids), V)
        nxt = int(np.argmax(scores[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids
