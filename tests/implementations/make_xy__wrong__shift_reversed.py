# exercise: make_xy · verdict: wrong · mistake: x and y swapped (y is the input shifted back)
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: The shift goes the other way
def make_xy(seq, eq=12, pad=0):
    x, y = list(seq[1:]), list(seq[:-1])
    k = list(seq).index(eq)
    return x, [pad] * k + y[k:]
