# exercise: greedy_decode · verdict: wrong · mistake: appends the highest score instead of its id
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: appends scores, not ids
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        best = np.max(model(ids)[-1])
        ids.append(best)
        if best == eos:
            break
    return ids
