# exercise: masked_loss · verdict: wrong · mistake: the sum instead of the mean
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: It returns the sum
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    nll = -np.log(p[np.arange(len(targets)), targets])
    return float(nll[targets != pad].sum())
