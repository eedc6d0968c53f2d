"""Independent reference values for the policy-gradient loss variants of the GRPO trainer.

Computes, in plain float64 Python (standard library only), the loss, the gradient
with respect to the current-policy log-probs `logp`, and auxiliary outputs for:
GSPO (sequence-level ratio), token-level truncated importance sampling (TIS),
sequence masking by rollout/trainer mismatch, mismatch statistics, the k2 KL
penalty, group advantages (RLOO, GRPO, Dr.GRPO, REINFORCE++ baseline) and the
DAPO overlong penalty, and FlowRL's flow-balance loss with its VarGrad estimate of
log Z (the three sequences one prompt's group), on one small fixed batch
(3 sequences x 4 tokens).

Every analytic gradient is checked against a central finite difference of the
loss (step 1e-6, tolerance 1e-6) before anything is printed.

The Go tests in this package load variants_reference.json (the output of this
script) and compare their own losses, gradients and statistics against it.
Regenerate with:

    /usr/bin/python3 variants_reference.py > variants_reference.json
"""

import json
import math

LOGP = [[-1.0, -0.5, -2.0, -0.1], [-0.3, -1.2, -0.7, -3.0], [-2.2, -0.05, -1.5, -0.9]]
OLD = [[-1.4, -0.5, -1.5, -0.3], [-0.3, -0.8, -0.9, -2.0], [-2.0, -0.6, -1.5, -0.4]]
REF = [[-1.1, -0.7, -1.9, -0.2], [-0.5, -1.0, -0.6, -2.5], [-2.1, -0.3, -1.4, -1.0]]
ROLLOUT = [[-1.3, -0.45, -1.6, -0.35], [-0.25, -0.9, -0.8, -2.2], [-2.05, -0.5, -1.45, -0.5]]
MASK = [[0, 1, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]
ADV = [1.5, -0.5, -1.0]

FD_STEP = 1e-6
FD_TOL = 1e-6


def token_weights(mask, aggregation):
    """w[i][t]: 'token_mean' = mask/sum(mask); 'sequence_mean' = mask/n_i/N (0 if n_i == 0)."""
    n_seq = len(mask)
    if aggregation == "token_mean":
        total = sum(sum(row) for row in mask)
        return [[(m / total if total > 0 else 0.0) for m in row] for row in mask]
    if aggregation == "sequence_mean":
        out = []
        for row in mask:
            n = sum(row)
            out.append([(m / n / n_seq if n > 0 else 0.0) for m in row])
        return out
    raise ValueError(aggregation)


def clip(x, lo, hi):
    return min(max(x, lo), hi)


def ppo_token(logp, old, a, eps_low, eps_high):
    """Standard PPO token term: returns (pg, d pg/d logp, clipped)."""
    ratio = math.exp(logp - old)
    unclipped = -a * ratio
    clipped = -a * clip(ratio, 1 - eps_low, 1 + eps_high)
    if clipped > unclipped:
        return clipped, 0.0, True
    return unclipped, -a * ratio, False


def gspo(logp, eps_low, eps_high, aggregation):
    """GSPO: one length-normalised ratio s_i per sequence, loss = sum w * pg_i."""
    w = token_weights(MASK, aggregation)
    loss, ratios, clipped_tokens = 0.0, [], 0
    grad = [[0.0] * len(row) for row in logp]
    for i, row in enumerate(logp):
        n = sum(MASK[i])
        s = math.exp(sum(m * (lp - o) for m, lp, o in zip(MASK[i], row, OLD[i])) / n) if n else 1.0
        ratios.append(s)
        a = ADV[i]
        unclipped = -a * s
        clipped = -a * clip(s, 1 - eps_low, 1 + eps_high)
        is_clipped = clipped > unclipped
        pg = clipped if is_clipped else unclipped
        g = 0.0 if is_clipped else -a * s
        if is_clipped:
            clipped_tokens += n
        wsum = sum(w[i])
        loss += wsum * pg
        for t in range(len(row)):
            grad[i][t] = wsum * g * MASK[i][t] / n + 0.0 if n else 0.0  # + 0.0: no -0.0
    return {"loss": loss, "seq_ratio": ratios, "grad": grad, "clipped_tokens": clipped_tokens}


def ppo_weighted(logp, mask, eps_low, eps_high, aggregation, is_w=None, kl_coef=0.0):
    """sum w * (is_w * pg + kl_coef * 0.5 (logp - ref)^2) and its gradient."""
    w = token_weights(mask, aggregation)
    loss, kl_sum, clipped_tokens = 0.0, 0.0, 0
    grad = [[0.0] * len(row) for row in logp]
    for i, row in enumerate(logp):
        for t, lp in enumerate(row):
            pg, dpg, c = ppo_token(lp, OLD[i][t], ADV[i], eps_low, eps_high)
            iw = is_w[i][t] if is_w is not None else 1.0
            kl = 0.5 * (lp - REF[i][t]) ** 2
            dkl = lp - REF[i][t]
            loss += w[i][t] * (iw * pg + kl_coef * kl)
            grad[i][t] = w[i][t] * (iw * dpg + kl_coef * dkl) + 0.0  # + 0.0: no -0.0
            if mask[i][t]:
                kl_sum += kl
                clipped_tokens += int(c)
    return {"loss": loss, "grad": grad, "kl_sum": kl_sum, "clipped_tokens": clipped_tokens}


def tis_weights(tis_clip, tis_clip_low):
    """Token-level truncated importance weights min(max(exp(old - rollout), low), high)."""
    return [[clip(math.exp(o - r), tis_clip_low, tis_clip) for o, r in zip(orow, rrow)]
            for orow, rrow in zip(OLD, ROLLOUT)]


def seq_mask(lo, hi):
    """Geometric-mean rollout ratio per sequence; sequences outside [lo, hi] are dropped."""
    ratios, kept, mask = [], [], []
    for i, row in enumerate(MASK):
        n = sum(row)
        r = math.exp(sum(m * (o - ro) for m, o, ro in zip(row, OLD[i], ROLLOUT[i])) / n) if n else 1.0
        keep = lo <= r <= hi
        ratios.append(r)
        kept.append(keep)
        mask.append(list(row) if keep else [0] * len(row))
    return ratios, kept, mask


def mismatch(a, b):
    """Mean and max of |a - b| over masked tokens."""
    diffs = [abs(x - y) for ra, rb, rm in zip(a, b, MASK) for x, y, m in zip(ra, rb, rm) if m]
    return sum(diffs) / len(diffs), max(diffs)


def groups(xs, size):
    return [xs[k:k + size] for k in range(0, len(xs), size)]


def rloo(rewards, size):
    out = []
    for g in groups(rewards, size):
        out += [r - (sum(g) - r) / (len(g) - 1) for r in g]
    return out


def grpo_adv(rewards, size):
    out = []
    for g in groups(rewards, size):
        mean = sum(g) / len(g)
        std = math.sqrt(sum((r - mean) ** 2 for r in g) / (len(g) - 1))
        out += [(r - mean) / (std + 1e-6) for r in g]
    return out


def drgrpo(rewards, size):
    out = []
    for g in groups(rewards, size):
        mean = sum(g) / len(g)
        out += [r - mean for r in g]
    return out


def reinforce_pp_baseline(rewards, size, counts):
    a = drgrpo(rewards, size)
    total = sum(counts)
    mu = sum(n * x for n, x in zip(counts, a)) / total
    var = sum(n * (x - mu) ** 2 for n, x in zip(counts, a)) / (total - 1)
    return [(x - mu) / math.sqrt(var + 1e-8) for x in a]


def overlong(lengths, max_len, buffer, factor):
    expected = max_len - buffer
    return [-max(L - expected, 0) / buffer * factor for L in lengths]


def vargrad_log_z(old, mask, adv, group_size, beta):
    """FlowRL's log Z per sequence: the group mean, over the sequences with loss
    tokens, of -(mean old logp - beta * adv - mean ref logp)."""
    out = []
    for start in range(0, len(old), group_size):
        vals = []
        for i in range(start, start + group_size):
            n = sum(mask[i])
            if n == 0:
                continue
            lp = sum(m * x for m, x in zip(mask[i], old[i])) / n
            ref = sum(m * x for m, x in zip(mask[i], REF[i])) / n
            vals.append(-(lp - beta * adv[i] - ref))
        z = sum(vals) / len(vals) if vals else 0.0
        out += [z] * group_size
    return out


def flowrl(logp, old, mask, log_z, beta, eps_low, eps_high, w_at=None):
    """FlowRL: sum_i s_i * w_i * delta_i^2 with the sequence-mean weights s_i,
    delta_i = log Z_i + mean logp - beta * adv_i - mean ref logp over the loss
    tokens, w_i = clip(exp(sum (logp - old)), 1 - eps_low, 1 + eps_high), held
    constant (stop-gradient): computed at w_at (default logp)."""
    w_at = logp if w_at is None else w_at
    s = token_weights(mask, "sequence_mean")
    loss, clipped_tokens, ratio_sum = 0.0, 0, 0.0
    grad = [[0.0] * len(row) for row in logp]
    for i, row in enumerate(logp):
        n = sum(mask[i])
        if n == 0:
            continue
        mean_lp = sum(m * x for m, x in zip(mask[i], row)) / n
        mean_ref = sum(m * x for m, x in zip(mask[i], REF[i])) / n
        delta = log_z[i] + mean_lp - beta * ADV[i] - mean_ref
        ratio = math.exp(sum(m * (x - o) for m, x, o in zip(mask[i], w_at[i], old[i])))
        w = clip(ratio, 1 - eps_low, 1 + eps_high)
        if w != ratio:
            clipped_tokens += n
        ratio_sum += n * ratio
        si = sum(s[i])
        loss += si * w * delta ** 2
        for t in range(len(row)):
            grad[i][t] = 2 * si * w * delta * mask[i][t] / n + 0.0  # + 0.0: no -0.0
    return {"loss": loss, "grad": grad, "clipped_tokens": clipped_tokens, "ratio_sum": ratio_sum}


def fd_check(name, loss_fn, grad):
    """Assert the analytic gradient matches a central finite difference of loss_fn(logp)."""
    for i in range(len(LOGP)):
        for t in range(len(LOGP[i])):
            plus = [list(r) for r in LOGP]
            minus = [list(r) for r in LOGP]
            plus[i][t] += FD_STEP
            minus[i][t] -= FD_STEP
            fd = (loss_fn(plus) - loss_fn(minus)) / (2 * FD_STEP)
            assert abs(fd - grad[i][t]) < FD_TOL, (name, i, t, fd, grad[i][t])


def main():
    out = {"inputs": {"logp": LOGP, "old": OLD, "ref": REF, "rollout": ROLLOUT,
                      "mask": MASK, "adv": ADV}}

    for name, lo, hi, agg in [("gspo_token_mean", 0.2, 0.28, "token_mean"),
                              ("gspo_sequence_mean", 3e-4, 4e-4, "sequence_mean"),
                              ("gspo_sequence_mean_wide", 0.2, 0.28, "sequence_mean")]:
        res = gspo(LOGP, lo, hi, agg)
        fd_check(name, lambda lp: gspo(lp, lo, hi, agg)["loss"], res["grad"])
        out[name] = dict(res, eps_low=lo, eps_high=hi, weights=agg, fd_checked=True)

    for name, c_hi, c_lo in [("tis_token", 2.0, 0.0), ("tis_token_low", 1.1, 0.95)]:
        isw = tis_weights(c_hi, c_lo)
        res = ppo_weighted(LOGP, MASK, 0.2, 0.28, "token_mean", is_w=isw)
        fd_check(name, lambda lp: ppo_weighted(lp, MASK, 0.2, 0.28, "token_mean", is_w=isw)["loss"],
                 res["grad"])
        out[name] = {"loss": res["loss"], "grad": res["grad"], "is_weights": isw,
                     "clipped_tokens": res["clipped_tokens"], "tis_clip": c_hi,
                     "tis_clip_low": c_lo, "eps_low": 0.2, "eps_high": 0.28,
                     "weights": "token_mean", "fd_checked": True}

    # seq_mask keeps every sequence; seq_mask_tight (extra case) drops sequence 1.
    for name, lo, hi in [("seq_mask", 0.9, 1.1), ("seq_mask_tight", 0.95, 1.05)]:
        ratios, kept, smask = seq_mask(lo, hi)
        res = ppo_weighted(LOGP, smask, 0.2, 0.28, "token_mean")
        fd_check(name, lambda lp: ppo_weighted(lp, smask, 0.2, 0.28, "token_mean")["loss"],
                 res["grad"])
        out[name] = {"seq_ratio": ratios, "kept": kept, "loss": res["loss"], "grad": res["grad"],
                     "lo": lo, "hi": hi, "eps_low": 0.2, "eps_high": 0.28,
                     "weights": "token_mean", "fd_checked": True}

    # FlowRL, the three sequences one group. log Z is VarGrad's estimate at the old
    # policy, a constant of the loss. flowrl_on_policy takes the old log-probs equal
    # to logp (a rollout's first step): every w is 1, and the finite difference of the
    # loss whose log Z is recomputed from the perturbed logp must still match the
    # gradient with log Z held constant, since the residuals sum to 0 over the group.
    masked = [list(MASK[0]), [0, 0, 0, 0], list(MASK[2])]
    for name, old, mask, beta, lo, hi in [("flowrl", OLD, MASK, 15.0, 0.2, 0.28),
                                          ("flowrl_wide", OLD, MASK, 1.0, 0.9, 1.0),
                                          ("flowrl_on_policy", LOGP, MASK, 15.0, 0.2, 0.28),
                                          ("flowrl_masked", OLD, masked, 15.0, 0.2, 0.28)]:
        log_z = vargrad_log_z(old, mask, ADV, 3, beta)
        res = flowrl(LOGP, old, mask, log_z, beta, lo, hi)
        fd_check(name, lambda lp: flowrl(lp, old, mask, log_z, beta, lo, hi, w_at=LOGP)["loss"],
                 res["grad"])
        if old is LOGP:
            fd_check(name + " (log Z recomputed)",
                     lambda lp: flowrl(lp, old, mask, vargrad_log_z(lp, mask, ADV, 3, beta), beta, lo, hi,
                                       w_at=LOGP)["loss"], res["grad"])
        out[name] = dict(res, log_z=log_z, beta=beta, group_size=3, mask=mask,
                         old_from="logp" if old is LOGP else "old", eps_low=lo, eps_high=hi,
                         weights="sequence_mean", fd_checked=True)

    m, mx = mismatch(OLD, ROLLOUT)
    lm, lmx = mismatch(LOGP, ROLLOUT)
    out["mismatch"] = {"mean_abs_diff": m, "max_abs_diff": mx,
                       "logp_mean_abs_diff": lm, "logp_max_abs_diff": lmx}

    res = ppo_weighted(LOGP, MASK, 0.2, 0.28, "sequence_mean", kl_coef=0.1)
    fd_check("k2", lambda lp: ppo_weighted(lp, MASK, 0.2, 0.28, "sequence_mean", kl_coef=0.1)["loss"],
             res["grad"])
    out["k2"] = {"loss": res["loss"], "kl_sum": res["kl_sum"], "grad": res["grad"],
                 "kl_coef": 0.1, "eps_low": 0.2, "eps_high": 0.28,
                 "weights": "sequence_mean", "fd_checked": True}

    rewards = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    counts = [3, 5, 2, 7, 4, 4, 1, 6, 2, 2, 3, 9]
    out["advantages"] = {"rewards": rewards, "group_size": 4, "token_counts": counts,
                         "rloo": rloo(rewards, 4), "grpo": grpo_adv(rewards, 4),
                         "drgrpo": drgrpo(rewards, 4),
                         "reinforce_pp_baseline": reinforce_pp_baseline(rewards, 4, counts)}

    lengths = [5, 12, 13, 16, 20]
    out["overlong"] = {"max_response_len": 20, "buffer": 8, "lengths": lengths,
                       "penalty_factor_1": overlong(lengths, 20, 8, 1.0),
                       "penalty_factor_0_5": overlong(lengths, 20, 8, 0.5)}

    print(json.dumps(out, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
