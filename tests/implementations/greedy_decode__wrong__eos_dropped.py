# exercise: greedy_decode · verdict: wrong · mistake: break before append, so <eos> is dropped
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: <eos> is missing
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(np.argmax(model(ids)[-1]))
        if nxt == eos:
            break
        ids.append(nxt)
    return ids
