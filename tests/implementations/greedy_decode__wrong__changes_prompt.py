# exercise: greedy_decode · verdict: wrong · mistake: appends to the caller's prompt
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: changes the caller's prompt
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = prompt
    for _ in range(max_new):
        nxt = int(np.argmax(model(ids)[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids
