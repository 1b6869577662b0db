# exercise: make_xy · verdict: wrong · mistake: looks for 12 instead of the eq argument
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: look for the eq argument
def make_xy(seq, eq=12, pad=0):
    x, y = list(seq[:-1]), list(seq[1:])
    k = list(seq).index(12)
    y[:k] = [pad] * k
    return x, y
