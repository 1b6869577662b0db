# exercise: make_xy · verdict: correct · NumPy arrays in, NumPy arrays out
# ruff: noqa: F821 (np and softmax are the notebook's)
def make_xy(seq, eq=12, pad=0):
    seq = np.asarray(seq)
    x = seq[:-1].copy()
    y = seq[1:].copy()
    k = int(np.argmax(seq == eq))  # the position of '='
    y[:k] = pad
    return x, y
