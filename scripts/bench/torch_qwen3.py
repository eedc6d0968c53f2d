"""PyTorch eager + transformers baseline of `mathrl bench --baseline torch`, on the CPU.

  torch_qwen3.py --config config.json [--batch 8 --seq-len 256 --steps 3]
                 [--decode-batch 16 --prompt-len 64 --new-tokens 32] [--threads N]
  torch_qwen3.py --model DIR ...        # a checkpoint folder instead of random weights
  torch_qwen3.py --products FILE [--dtype D --threads N --matmul-peak N]

It builds transformers' Qwen3ForCausalLM from a Hugging Face config.json (random
weights) or loads a checkpoint folder, in --dtype on the CPU with
torch.set_num_threads(--threads), and prints one JSON object on stdout (progress
goes to stderr). The field names are those of `mathrl bench --json`:

  train step: a forward with labels (cross-entropy on every next token), its
    backward, the global gradient-norm clip and torch.optim.AdamW's step; the
    first step (AdamW's moments allocated) is timed apart as train_compile_s,
    then --steps steps are averaged.
  decode: model.generate with the KV cache (DynamicCache), greedy at
    --temperature 0 (else sampling at that temperature, no top-k nor top-p),
    exactly --new-tokens tokens per prompt (min_new_tokens = max_new_tokens).
    A stopping criterion records the time after every token: the first token
    (prefill) is prefill_ms, the others give decode_step_ms. A short generate
    call before it warms up (decode_compile_s).
  matmul peak (--matmul-peak N > 0): torch.mm of two square matrices in
    float32 and in bfloat16, as `mathrl bench --roofline` times its own: sides
    doubling from 256 while a product takes under 100 ms, up to N, one product
    then three timed at each; the best rate of each dtype goes in "matmuls".
  products (--products FILE, no model): the matrix products listed in FILE, a
    JSON list of `mathrl bench --what products`' products ({"form", "rows",
    "in", "out"}: a weight [out, in] and rows tokens), each as torch's linear
    layer and its autograd compute it: x.wT is F.linear(x, w), g.w
    grad.mm(weight), gT.x grad.t().mm(input); each summed to a scalar, as
    mathrl's are, one call then the fastest of three, the time of each in
    "products_ms", in the file's order.
"""
import argparse
import json
import sys
import time


def log(msg):
    print(f"torch: {msg}", file=sys.stderr, flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--config", help="Hugging Face config.json of a random model")
    src.add_argument("--model", help="checkpoint folder (config.json + safetensors)")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--what", default="both", choices=["train", "decode", "both"])
    p.add_argument("--batch", type=int, default=8, help="training sequences per step")
    p.add_argument("--seq-len", type=int, default=256, help="tokens per training sequence")
    p.add_argument("--steps", type=int, default=3, help="timed training steps")
    p.add_argument("--decode-batch", type=int, default=16, help="prompts decoded together")
    p.add_argument("--prompt-len", type=int, default=64, help="tokens per prompt")
    p.add_argument("--new-tokens", type=int, default=32, help="tokens generated per prompt")
    p.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=1e-6)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--clip-norm", type=float, default=1.0, help="global gradient-norm clip (0: none)")
    p.add_argument("--matmul-peak", type=int, default=0, help="largest side of the timed square matmuls (0: none)")
    p.add_argument("--products", help="JSON list of matrix products to time instead of a model")
    args = p.parse_args(argv)
    if not (args.config or args.model or args.products):
        p.error("one of --config, --model or --products is required")
    for name in ("batch", "seq_len", "steps", "decode_batch", "prompt_len", "new_tokens"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} {getattr(args, name)}, want >= 1")
    if args.matmul_peak < 0:
        p.error(f"--matmul-peak {args.matmul_peak}, want >= 0")
    if args.seq_len < 2:
        p.error(f"--seq-len {args.seq_len}, want >= 2")
    if args.new_tokens < 2:
        p.error(f"--new-tokens {args.new_tokens}, want >= 2 (one for the prefill, the others timed)")
    return args


def build_model(args, torch):
    from transformers import AutoConfig, Qwen3ForCausalLM
    dtype = getattr(torch, args.dtype)
    if args.model:
        model = Qwen3ForCausalLM.from_pretrained(args.model, dtype=dtype)
    else:
        cfg = AutoConfig.from_pretrained(args.config)
        torch.manual_seed(args.seed)
        model = Qwen3ForCausalLM._from_config(cfg, dtype=dtype)
    return model.to("cpu")


def train_bench(args, torch, model):
    """Times forward + cross-entropy backward + clip + AdamW on [batch, seq_len] random ids."""
    gen = torch.Generator().manual_seed(args.seed)
    ids = torch.randint(0, model.config.vocab_size, (args.batch, args.seq_len), generator=gen)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps,
                            weight_decay=args.weight_decay)
    model.train()

    def step():
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        if args.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, args.clip_norm)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    log(f"train: first step {first:.1f} s")
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    sec = (time.perf_counter() - t0) / args.steps
    log(f"train: {sec * 1000:.1f} ms/step")
    del opt
    return {"train_compile_s": first, "train_step_ms": sec * 1000,
            "train_tokens_per_s": args.batch * args.seq_len / sec}


MATMUL_FIRST, MATMUL_LONG_S, MATMUL_REPEATS = 256, 0.1, 3  # as MeasureMatmul in gomlx_trainer/bench


def matmul_peak(torch, dtype, max_n):
    """The best FLOP/s of torch.mm on square matrices of dtype, and the side that gave it."""
    best, best_n = 0.0, 0
    n = min(MATMUL_FIRST, max_n)
    while n <= max_n:
        a = torch.rand(n, n, dtype=dtype) * 2 - 1
        b = torch.rand(n, n, dtype=dtype) * 2 - 1
        torch.mm(a, b)
        fastest = float("inf")
        for _ in range(MATMUL_REPEATS):
            t0 = time.perf_counter()
            torch.mm(a, b)
            fastest = min(fastest, time.perf_counter() - t0)
        if 2 * n ** 3 / fastest > best:
            best, best_n = 2 * n ** 3 / fastest, n
        if fastest >= MATMUL_LONG_S:
            break
        n *= 2
    return best, best_n


def matmul_bench(args, torch):
    """The float32 and bfloat16 matmul peaks, as the "matmuls" of `mathrl bench --json`'s roofline."""
    out = []
    for name in ("float32", "bfloat16"):
        rate, n = matmul_peak(torch, getattr(torch, name), args.matmul_peak)
        log(f"matmul {name}: {rate / 1e9:.1f} GFLOP/s at n {n}")
        out.append({"on": "torch", "dtype": name, "n": n, "flops_per_s": rate})
    return {"matmuls": out}


PRODUCT_FORMS = {
    # a weight w [out, in] on rows tokens: the operands' shapes and the product
    "x·wT": (lambda p: (p["rows"], p["in"]), lambda p: (p["out"], p["in"]), lambda F, a, b: F.linear(a, b)),
    "g·w": (lambda p: (p["rows"], p["out"]), lambda p: (p["out"], p["in"]), lambda F, a, b: a.mm(b)),
    "gT·x": (lambda p: (p["rows"], p["out"]), lambda p: (p["rows"], p["in"]), lambda F, a, b: a.t().mm(b)),
}


def time_product(torch, dtype, p):
    """The fastest of three calls of product p (after one), summed to a scalar as mathrl's are."""
    import torch.nn.functional as F
    if p.get("form") not in PRODUCT_FORMS:
        raise SystemExit(f"torch_qwen3.py: --products: form {p.get('form')!r}, want one of {sorted(PRODUCT_FORMS)}")
    lhs, rhs, fn = PRODUCT_FORMS[p["form"]]
    a = torch.rand(*lhs(p), dtype=dtype) * 2 - 1
    b = torch.rand(*rhs(p), dtype=dtype) * 2 - 1
    fn(F, a, b).sum().item()
    fastest = float("inf")
    for _ in range(MATMUL_REPEATS):
        t0 = time.perf_counter()
        fn(F, a, b).sum().item()
        fastest = min(fastest, time.perf_counter() - t0)
    return fastest


def products_bench(args, torch):
    """Times every product of the --products file; equal ones once."""
    with open(args.products) as f:
        products = json.load(f)
    dtype = getattr(torch, args.dtype)
    done, out = {}, []
    for p in products:
        key = (p.get("form"), p.get("rows"), p.get("in"), p.get("out"))
        if key not in done:
            done[key] = time_product(torch, dtype, p) * 1000
            log(f"products: {p['part']} {p['weight']} {p['form']} [{p['rows']} rows, {p['in']} in, {p['out']} out]: "
                f"{done[key]:.2f} ms")
        out.append(done[key])
    return {"products_ms": out}


class TokenClock:
    """A stopping criterion that never stops and records the time of every new token."""

    def __init__(self, torch):
        self.torch = torch
        self.times = []

    def __call__(self, input_ids, scores, **kwargs):
        self.times.append(time.perf_counter())
        return self.torch.zeros(input_ids.shape[0], dtype=self.torch.bool)


def generate(args, torch, model, ids, n, clock=None):
    from transformers import StoppingCriteriaList
    kw = {"do_sample": False}
    if args.temperature > 0:
        kw = {"do_sample": True, "temperature": args.temperature, "top_k": 0, "top_p": 1.0}
    eos = model.config.eos_token_id
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                         use_cache=True, pad_token_id=0, eos_token_id=eos,
                         stopping_criteria=StoppingCriteriaList([clock] if clock else []), **kw)
    if out.shape[1] != ids.shape[1] + n:
        raise SystemExit(f"torch_qwen3.py: generate returned {out.shape[1] - ids.shape[1]} new tokens, want {n}")


def decode_bench(args, torch, model):
    """Times generate on [decode_batch, prompt_len] random prompts, the prefill apart."""
    gen = torch.Generator().manual_seed(args.seed + 1)
    ids = torch.randint(0, model.config.vocab_size, (args.decode_batch, args.prompt_len), generator=gen)
    model.eval()
    with torch.no_grad():
        t0 = time.perf_counter()
        generate(args, torch, model, ids, 2)
        warm = time.perf_counter() - t0
        log(f"decode: warm-up {warm:.1f} s")
        clock = TokenClock(torch)
        t0 = time.perf_counter()
        generate(args, torch, model, ids, args.new_tokens, clock)
    if len(clock.times) != args.new_tokens:
        raise SystemExit(f"torch_qwen3.py: the stopping criterion ran {len(clock.times)} times, want {args.new_tokens}")
    prefill = clock.times[0] - t0
    step = (clock.times[-1] - clock.times[0]) / (args.new_tokens - 1)
    log(f"decode: prefill {prefill * 1000:.1f} ms, {step * 1000:.2f} ms/step")
    return {"decode_compile_s": warm, "prefill_ms": prefill * 1000, "decode_step_ms": step * 1000,
            "decode_tokens_per_s": args.decode_batch / step}


def main(argv=None):
    args = parse_args(argv)
    import torch
    import transformers
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.products:
        res = {"torch": torch.__version__, "threads": torch.get_num_threads(), "dtype": args.dtype}
        if args.matmul_peak > 0:
            res.update(matmul_bench(args, torch))
        res.update(products_bench(args, torch))
        print(json.dumps(res), flush=True)
        return
    model = build_model(args, torch)
    attn = getattr(model.config, "_attn_implementation", None) or ""
    res = {"torch": torch.__version__, "transformers": transformers.__version__, "threads": torch.get_num_threads(),
           "attn_implementation": attn, "dtype": args.dtype,
           "params": sum(p.numel() for p in model.parameters()),
           "batch": args.batch, "seq_len": args.seq_len, "decode_batch": args.decode_batch,
           "prompt_len": args.prompt_len, "new_tokens": args.new_tokens}
    log(f"{res['params'] / 1e6:.1f}M parameters, {args.dtype}, {res['threads']} threads, attention {attn}")
    if args.matmul_peak > 0:
        res.update(matmul_bench(args, torch))
    if args.what in ("train", "both"):
        res.update(train_bench(args, torch, model))
    if args.what in ("decode", "both"):
        res.update(decode_bench(args, torch, model))
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
