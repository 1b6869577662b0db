# exercise: greedy_decode · verdict: wrong · mistake: runs the model on the last token only
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: on the last token only
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(np.argmax(model(ids[-1:])[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids
