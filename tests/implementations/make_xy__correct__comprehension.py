# exercise: make_xy · verdict: correct · a list comprehension over the targets
# ruff: noqa: F821 (np and softmax are the notebook's)
def make_xy(seq, eq=12, pad=0):
    k = list(seq).index(eq)
    x = [t for t in seq[:-1]]
    y = [pad if i < k else t for i, t in enumerate(seq[1:])]
    return (x, y)
