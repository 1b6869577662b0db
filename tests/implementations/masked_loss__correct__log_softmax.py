# exercise: masked_loss · verdict: correct · log-softmax written out (log-sum-exp), no softmax call
# ruff: noqa: F821 (np and softmax are the notebook's)
def masked_loss(logits, targets, pad=0):
    m = logits.max(axis=1, keepdims=True)
    log_p = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))  # (N, V)
    picked = log_p[np.arange(len(targets)), targets]
    keep = targets != pad
    return -picked[keep].sum() / keep.sum()
