"""PyTorch + transformers side of scripts/device/bench_h200.sh.

  bench_torch.py --batch 64 --len 320 --new-tokens 256 --steps 5   # prints one JSON object
  bench_torch.py --compare gomlx.json torch.json                    # prints the ratios
  bench_torch.py --parity-prompt reference.json                     # JSONL line for `mathrl forward`
  bench_torch.py --parity-check MODEL_DIR forward_out.jsonl [--tol 1e-4]  # logits_last against transformers, live

The model has Qwen3-0.6B's shapes with random weights (as `mathrl bench
--config qwen3-0.6b` uses), in bfloat16 on the GPU. The training step is a
forward with labels (cross-entropy on every token), backward and AdamW; decoding
is `generate` with sampling at temperature 1, no top-k/top-p, no stop token, so
every sequence gets exactly --new-tokens tokens. Times exclude a warm-up call.
"""
import argparse
import json
import sys
import time


def qwen3_06b_config():
    from transformers import Qwen3Config
    kw = dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
              num_attention_heads=16, num_key_value_heads=8, head_dim=128, rms_norm_eps=1e-6,
              tie_word_embeddings=True, max_position_embeddings=40960, use_sliding_window=False)
    try:  # transformers >= 5 reads rope_parameters, older ones rope_theta
        return Qwen3Config(rope_parameters={"rope_type": "default", "rope_theta": 1e6}, **kw)
    except TypeError:
        return Qwen3Config(rope_theta=1e6, **kw)


def bench(args):
    import torch
    from transformers import Qwen3ForCausalLM
    torch.manual_seed(0)
    dev = "cuda"
    model = Qwen3ForCausalLM._from_config(qwen3_06b_config(), attn_implementation="sdpa")
    model.to(device=dev, dtype=torch.bfloat16)
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (args.batch, args.len), device=dev)
    res = {"batch": args.batch, "seq_len": args.len, "new_tokens": args.new_tokens,
           "torch": torch.__version__, "params": sum(p.numel() for p in model.parameters())}
    import transformers
    res["transformers"] = transformers.__version__

    # --- training step: forward with labels, backward, AdamW.
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6)

    def step():
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    sec = (time.perf_counter() - t0) / args.steps
    res["train_step_ms"] = sec * 1000
    res["train_tokens_per_s"] = args.batch * args.len / sec
    del opt
    torch.cuda.empty_cache()

    # --- decoding: prefill alone, then generate; decode step = (generate - prefill) / (new - 1).
    model.eval()
    gen = dict(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, min_new_tokens=args.new_tokens,
               max_new_tokens=args.new_tokens, pad_token_id=0, eos_token_id=None)
    attn = torch.ones_like(ids)
    with torch.no_grad():
        model.generate(input_ids=ids, attention_mask=attn, **dict(gen, min_new_tokens=2, max_new_tokens=2))
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model(input_ids=ids, attention_mask=attn, use_cache=True)
        torch.cuda.synchronize()
        prefill = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = model.generate(input_ids=ids, attention_mask=attn, **gen)
        torch.cuda.synchronize()
        total = time.perf_counter() - t0
    assert out.shape[1] == args.len + args.new_tokens, out.shape
    step_s = (total - prefill) / (args.new_tokens - 1)
    res["prefill_ms"] = prefill * 1000
    res["decode_step_ms"] = step_s * 1000
    res["decode_tokens_per_s"] = args.batch / step_s
    res["generate_total_s"] = total
    print(json.dumps(res))


def compare(gomlx_path, torch_path):
    g = json.load(open(gomlx_path))
    t = json.load(open(torch_path))
    rows = [
        ("train step ms", g.get("train_step_ms"), t.get("train_step_ms"), "torch/gomlx (>1: mathrl faster)"),
        ("train tokens/s", g.get("train_tokens_per_s"), t.get("train_tokens_per_s"), ""),
        ("decode step ms", g.get("decode_step_ms"), t.get("decode_step_ms"), "torch/gomlx"),
        ("decode tokens/s", g.get("decode_tokens_per_s"), t.get("decode_tokens_per_s"), ""),
        ("prefill ms", g.get("prefill_ms"), t.get("prefill_ms"), "torch/gomlx"),
    ]
    print(f"{'':18} {'mathrl':>12} {'torch':>12} {'ratio':>8}")
    for name, a, b, note in rows:
        if a and b:
            ratio = b / a if "ms" in name else a / b
            print(f"{name:18} {a:12.2f} {b:12.2f} {ratio:8.2f}  {note}")
    if g.get("decode_whole_cache_step_ms") and g.get("decode_step_ms"):
        w, d = g["decode_whole_cache_step_ms"], g["decode_step_ms"]
        print(f"mathrl decode attending over the whole cache: {w:.2f} ms/step ({w / d:.2f}x the windowed step)")
    roofline(g, t)
    if g.get("train_compile_s"):
        print(f"mathrl first train step {g['train_compile_s']:.1f} s")
    print("targets: train step >= 2x torch; decode <= 1.5 ms/step at batch 64")


def roofline(g, t):
    """Each side's fraction of the roofline mathrl's figures were read against (`mathrl bench
    --roofline-peaks`): mathrl's own, and torch's from the same work in its own time (both ran the
    same shapes, so a fraction scales as 1 / step time)."""
    roof = g.get("roofline")
    if not roof:
        return
    parts = [("train MFU", "train_mfu", "train_step_ms", "matmul peak"),
             ("prefill MFU", "prefill_mfu", "prefill_ms", "matmul peak"),
             ("decode MBU", "decode_mbu", "decode_step_ms", "bandwidth"),
             ("decode MFU", "decode_mfu", "decode_step_ms", "matmul peak")]
    for name, frac, ms, limit in parts:
        if not g.get(frac):
            continue
        line = f"{name} (of the {roof['source']} {limit}): mathrl {100 * g[frac]:.3g}%"
        if t.get(ms) and g.get(ms):
            line += f", torch {100 * g[frac] * g[ms] / t[ms]:.3g}%"
        print(line)


def parity_prompt(ref_path):
    ref = json.load(open(ref_path))
    print(json.dumps({"input_ids": ref["input_ids"][0]}))


def parity_check(model_dir, out_path, tol):
    """Compares `mathrl forward`'s logits_last with transformers' computed now,
    on the CPU in float32, for the same input_ids (kept in the output line)."""
    import torch
    from transformers import AutoModelForCausalLM
    line = json.loads(open(out_path).readline())
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype="auto").float().eval()
    with torch.no_grad():
        ref = model(torch.tensor([line["input_ids"]])).logits[0, -1].tolist()
    got = line["logits_last"]
    scale = max(abs(v) for v in ref)
    err = max(abs(a - b) for a, b in zip(got, ref)) / scale
    print(f"logits_last on the device vs transformers: max error relative to the largest logit {err:.2e} "
          f"(tolerance {tol:g}): {'PASS' if err <= tol else 'FAIL'}")
    sys.exit(0 if err <= tol else 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--len", type=int, default=320)
    p.add_argument("--new-tokens", type=int, default=256)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--compare", nargs=2)
    p.add_argument("--parity-prompt")
    p.add_argument("--parity-check", nargs=2)
    p.add_argument("--tol", type=float, default=1e-4, help="--parity-check's tolerance (relative to the largest logit)")
    args = p.parse_args()
    if args.compare:
        compare(*args.compare)
    elif args.parity_prompt:
        parity_prompt(args.parity_prompt)
    elif args.parity_check:
        parity_check(*args.parity_check, args.tol)
    else:
        bench(args)


if __name__ == "__main__":
    main()
