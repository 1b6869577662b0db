# exercise: greedy_decode · verdict: wrong · mistake: on a tie picks the last of the highest scores
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: picks the last of them
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        row = model(ids)[-1]
        nxt = int(np.argsort(row, kind="stable")[-1])
        ids.append(nxt)
        if nxt == eos:
            break
    return ids
