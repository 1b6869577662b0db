# exercise: masked_loss · verdict: wrong · mistake: returns the per-row losses, not their mean
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: one number
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    nll = -np.log(p[np.arange(len(targets)), targets])
    return nll[targets != pad]
