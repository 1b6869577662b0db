# exercise: masked_loss · verdict: wrong · mistake: skips the targets that are 0 whatever pad is
# ruff: noqa: F821 (np and softmax are the notebook's)
# check says: equal to the pad argument
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    nll = -np.log(p[np.arange(len(targets)), targets])
    return float(nll[targets != 0].mean())
