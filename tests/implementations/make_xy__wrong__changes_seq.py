# exercise: make_xy · verdict: wrong · mistake: pops the last token off the caller's list
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: changes the caller's sequence
def make_xy(seq, eq=12, pad=0):
    y = list(seq[1:])
    k = seq.index(eq)
    y[:k] = [pad] * k
    seq.pop()
    return seq, y
