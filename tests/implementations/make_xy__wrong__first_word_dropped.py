# exercise: make_xy · verdict: wrong · mistake: the first word's target is padded too
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: The first word's target
def make_xy(seq, eq=12, pad=0):
    x, y = list(seq[:-1]), list(seq[1:])
    k = list(seq).index(eq)
    for i in range(k + 1):
        y[i] = pad
    return x, y
