# exercise: make_xy · verdict: correct · slices and list.index
# ruff: noqa: F821 (np and softmax are the notebook's)
def make_xy(seq, eq=12, pad=0):
    x = list(seq[:-1])
    y = list(seq[1:])
    k = list(seq).index(eq)  # targets 0 … k-1 are the question
    for i in range(k):
        y[i] = pad
    return x, y
