# exercise: make_xy · verdict: wrong · mistake: no shift (x and y are the same tokens)
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: not shifted
def make_xy(seq, eq=12, pad=0):
    x = list(seq[:-1])
    k = x.index(eq)
    y = [pad] * (k + 1) + x[k + 1:]
    return x, y
