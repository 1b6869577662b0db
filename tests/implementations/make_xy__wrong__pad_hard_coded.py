# exercise: make_xy · verdict: wrong · mistake: writes 0 instead of the pad argument
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: use the pad argument
def make_xy(seq, eq=12, pad=0):
    x, y = list(seq[:-1]), list(seq[1:])
    k = list(seq).index(eq)
    y[:k] = [0] * k
    return x, y
