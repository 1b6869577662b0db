# exercise: make_xy · verdict: correct · one loop with a flag: the answer starts after '='
# ruff: noqa: F821 (np and softmax are the notebook's)
def make_xy(seq, eq=12, pad=0):
    x, y = [], []
    answer = False
    for t in range(len(seq) - 1):
        x.append(seq[t])
        if seq[t] == eq:
            answer = True
        y.append(seq[t + 1] if answer else pad)
    return x, y
