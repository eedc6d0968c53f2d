"""Checks that transformers loads checkpoints written by mathrl.

usage: python3 check_export.py MATHRL_BIN TINY_DIR [TRAINED_CKPT_DIR]

TINY_DIR is a float32 random checkpoint from `mathrl model init`: transformers
loads it, computes the last-position logits of a few random sequences, and they
must equal `mathrl forward --backend cpu` within 1e-4 relative. TRAINED_CKPT_DIR,
when given, is a checkpoint folder of a training run: transformers must load it
(weights, config.json, tokenizer.json) and produce finite logits.
"""
import json
import subprocess
import sys

import torch
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast


def main():
    binary, tiny = sys.argv[1], sys.argv[2]
    trained = sys.argv[3] if len(sys.argv) > 3 else None
    cfg = json.load(open(f"{tiny}/config.json"))
    gen = torch.Generator().manual_seed(0)
    seqs = [torch.randint(0, cfg["vocab_size"], (n,), generator=gen).tolist() for n in (5, 17, 40)]
    lines = "".join(json.dumps({"input_ids": s}) + "\n" for s in seqs)
    out = subprocess.run([binary, "forward", "--model", tiny, "--backend", "cpu"],
                         input=lines, capture_output=True, text=True, check=True).stdout
    ours = [json.loads(l)["logits_last"] for l in out.splitlines() if l.strip()]

    model = AutoModelForCausalLM.from_pretrained(tiny, torch_dtype=torch.float32).eval()
    worst = 0.0
    with torch.no_grad():
        for s, mine in zip(seqs, ours):
            ref = model(torch.tensor([s])).logits[0, -1]
            err = (torch.tensor(mine) - ref).abs().max().item() / ref.abs().max().item()
            worst = max(worst, err)
    print(f"tiny export: transformers loaded it; max relative error of last logits vs mathrl forward: {worst:.2e}")
    ok = worst < 1e-4 and len(ours) == len(seqs)

    if trained:
        tok = PreTrainedTokenizerFast(tokenizer_file=f"{trained}/tokenizer.json")
        model = AutoModelForCausalLM.from_pretrained(trained, torch_dtype=torch.bfloat16)
        ids = tok("Compute 12*34.", return_tensors="pt").input_ids
        with torch.no_grad():
            logits = model(ids).logits
        finite = bool(torch.isfinite(logits).all())
        print(f"trained checkpoint {trained}: transformers loaded it ({sum(p.numel() for p in model.parameters())} "
              f"parameters, tokenizer of {len(tok)} tokens); logits finite: {finite}")
        ok = ok and finite
    print("export check:", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
