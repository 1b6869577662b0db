# exercise: make_xy · verdict: wrong · mistake: pads every digit target, wherever it is (wrong for the copy task)
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: whose '=' is id 3
def make_xy(seq, eq=12, pad=0):
    x = list(seq[:-1])
    y = [pad if (2 <= t <= 11 or t == eq) else t for t in seq[1:]]
    return x, y
