# exercise: greedy_decode · verdict: correct · a while loop that counts the new tokens
# ruff: noqa: F821 (np and softmax are the notebook's)
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = prompt[:]
    new = 0
    while new < max_new:
        nxt = np.argmax(model(ids)[len(ids) - 1])
        ids.append(nxt)
        new += 1
        if ids[-1] == eos:
            break
    return ids
