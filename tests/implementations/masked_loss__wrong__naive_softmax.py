# exercise: masked_loss · verdict: wrong · mistake: its own softmax without subtracting the max (overflows)
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: exp overflows
def masked_loss(logits, targets, pad=0):
    e = np.exp(logits)
    p = e / e.sum(axis=1, keepdims=True)
    nll = -np.log(p[np.arange(len(targets)), targets])
    return float(nll[targets != pad].mean())
