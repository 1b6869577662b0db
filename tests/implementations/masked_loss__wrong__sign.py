# exercise: masked_loss · verdict: wrong · mistake: the sign (log p, not −log p)
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: The sign is wrong
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    logp = np.log(p[np.arange(len(targets)), targets])
    return float(logp[targets != pad].mean())
