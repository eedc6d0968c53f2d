"""Independent reference values for on-policy distillation in the GRPO trainer.

Computes, in plain float64 Python (standard library only), the per-token
advantage of on-policy distillation

    A[i][t] = outcome_coef * ADV[i] + kl_coef * (TEACHER[i][t] - OLD[i][t])

(0 from the distillation term where MASK is 0: tool responses get none), the
PPO-clip loss sum_t w[i][t] * max(-A*ratio, -A*clip(ratio, 1-eps_low, 1+eps_high))
with ratio = exp(LOGP - OLD), its gradient with respect to LOGP, and the mean
reverse-KL estimate OLD - TEACHER over the sampled tokens, on one small fixed
batch (3 sequences x 4 tokens; the same LOGP, OLD, MASK and ADV as
variants_reference.py).

Every analytic gradient is checked against a central finite difference of the
loss (step 1e-6, tolerance 1e-6) before anything is printed.

distill_test.go loads distill_reference.json (the output of this script) and
compares distillSequences and PolicyLoss against it. Regenerate with:

    /usr/bin/python3 distill_reference.py > distill_reference.json
"""

import json
import math

LOGP = [[-1.0, -0.5, -2.0, -0.1], [-0.3, -1.2, -0.7, -3.0], [-2.2, -0.05, -1.5, -0.9]]
OLD = [[-1.4, -0.5, -1.5, -0.3], [-0.3, -0.8, -0.9, -2.0], [-2.0, -0.6, -1.5, -0.4]]
TEACHER = [[-0.9, -0.2, -2.6, -0.3], [-1.5, -0.4, -0.1, -1.0], [-2.0, -1.6, -0.7, -0.2]]
MASK = [[0, 1, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]
ADV = [1.5, -0.5, -1.0]

FD_STEP = 1e-6
FD_TOL = 1e-6


def token_weights(aggregation):
    """w[i][t]: 'token_mean' = mask/sum(mask); 'sequence_mean' = mask/n_i/N."""
    if aggregation == "token_mean":
        total = sum(sum(row) for row in MASK)
        return [[m / total for m in row] for row in MASK]
    return [[m / sum(row) / len(MASK) for m in row] for row in MASK]


def advantages(kl_coef, outcome_coef):
    """Per-token advantages: the outcome term everywhere, the distillation term on sampled tokens."""
    out = []
    for i, row in enumerate(MASK):
        out.append([outcome_coef * ADV[i] + (kl_coef * (TEACHER[i][t] - OLD[i][t]) if m else 0.0)
                    for t, m in enumerate(row)])
    return out


def loss_and_grad(logp, adv, w, eps_low, eps_high):
    """PPO-clip with per-token advantages: (loss, d loss/d logp)."""
    loss = 0.0
    grad = [[0.0] * len(row) for row in logp]
    for i, row in enumerate(logp):
        for t, lp in enumerate(row):
            ratio = math.exp(lp - OLD[i][t])
            a = adv[i][t]
            unclipped = -a * ratio
            clipped = -a * min(max(ratio, 1 - eps_low), 1 + eps_high)
            if clipped > unclipped:
                pg, g = clipped, 0.0
            else:
                pg, g = unclipped, -a * ratio
            loss += w[i][t] * pg
            grad[i][t] = w[i][t] * g
    return loss, grad


def check_gradient(adv, w, eps_low, eps_high, grad):
    for i in range(len(LOGP)):
        for t in range(len(LOGP[i])):
            up = [row[:] for row in LOGP]
            down = [row[:] for row in LOGP]
            up[i][t] += FD_STEP
            down[i][t] -= FD_STEP
            fd = (loss_and_grad(up, adv, w, eps_low, eps_high)[0] - loss_and_grad(down, adv, w, eps_low, eps_high)[0]) / (2 * FD_STEP)
            if abs(fd - grad[i][t]) > FD_TOL:
                raise SystemExit(f"gradient [{i}][{t}]: analytic {grad[i][t]}, finite difference {fd}")


def case(kl_coef, outcome_coef, aggregation, eps_low=0.2, eps_high=0.28):
    adv = advantages(kl_coef, outcome_coef)
    w = token_weights(aggregation)
    loss, grad = loss_and_grad(LOGP, adv, w, eps_low, eps_high)
    check_gradient(adv, w, eps_low, eps_high, grad)
    return {"kl_coef": kl_coef, "outcome_coef": outcome_coef, "weights": aggregation, "eps_low": eps_low,
            "eps_high": eps_high, "advantages": adv, "loss": loss, "grad": grad}


def main():
    kl_sum = sum(OLD[i][t] - TEACHER[i][t] for i, row in enumerate(MASK) for t, m in enumerate(row) if m)
    n = sum(sum(row) for row in MASK)
    out = {
        "inputs": {"logp": LOGP, "old": OLD, "teacher": TEACHER, "mask": MASK, "adv": ADV},
        "reverse_kl": kl_sum / n,
        "cases": {
            "pure_token_mean": case(1.0, 0.0, "token_mean"),
            "pure_sequence_mean": case(1.0, 0.0, "sequence_mean"),
            "mixed_token_mean": case(0.5, 1.0, "token_mean"),
            "mixed_sequence_mean_wide": case(2.0, 0.5, "sequence_mean", 0.5, 0.5),
        },
    }
    print(json.dumps(out, indent=1, sort_keys=True))


main()
