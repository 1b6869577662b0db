# exercise: make_xy · verdict: wrong · mistake: the '=' target is kept
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: The target '=' (under the last digit) is kept
def make_xy(seq, eq=12, pad=0):
    x, y = list(seq[:-1]), list(seq[1:])
    k = list(seq).index(eq)
    for i in range(k - 1):
        y[i] = pad
    return x, y
