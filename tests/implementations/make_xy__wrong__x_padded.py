# exercise: make_xy · verdict: wrong · mistake: the question is padded in x as well
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: x keeps every token
def make_xy(seq, eq=12, pad=0):
    k = list(seq).index(eq)
    x = [pad] * k + list(seq[k:-1])
    y = [pad] * k + list(seq[k + 1:])
    return x, y
