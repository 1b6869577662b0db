# exercise: greedy_decode · verdict: correct · a helper inside, a while True loop with two exits
# ruff: noqa: F821 (np and softmax are the notebook's)
def greedy_decode(model, prompt, eos=1, max_new=6):
    def pick(row):
        return int(np.argmax(row))

    ids = list(prompt)
    written = 0
    while True:
        if written == max_new:
            return ids
        ids.append(pick(model(ids)[-1]))
        written += 1
        if ids[-1] == eos:
            return ids
