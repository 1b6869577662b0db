# exercise: masked_loss · verdict: correct · 0/1 weights, weighted sum over the count
# ruff: noqa: F821 (np and softmax are the notebook's)
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    nll = -np.log(p[np.arange(len(targets)), targets])
    w = np.where(targets == pad, 0.0, 1.0)
    return np.sum(nll * w) / np.sum(w)
