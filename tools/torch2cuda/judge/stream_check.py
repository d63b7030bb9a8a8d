#!/usr/bin/env python3
"""GPU check of the judge's stream-discipline trial (stream_trial), in seconds and with no
extension build: candidates made of torch ops put their work where compiled answers put it.

    python3 tools/torch2cuda/judge/stream_check.py

* current: the work on PyTorch's current stream                         -> stream current
* legacy:  the work on the legacy default stream (torch.cuda.default_stream() is stream 0,
           where `kernel<<<grid, block>>>` launches go)                    -> legacy_default
* nonblocking_own: on a non-blocking stream of its own, never joined     -> side
* blocking_own:    on a blocking stream of its own (cuStreamCreate flags 0, as
                   cudaStreamCreate makes), never joined                  -> side
* legacy_then_sync: legacy default stream, then a device-wide synchronize -> legacy_default

Prints one line per case and 'N failure(s)'; exits 1 on any failure.
"""
import ctypes
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import judge as J  # noqa: E402


def main():
    if not torch.cuda.is_available():
        print("no CUDA device")
        return 1
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    assert torch.cuda.default_stream(dev).cuda_stream == 0, "PyTorch's default stream is not the legacy stream"
    own_nb = torch.cuda.Stream(device=dev)
    lib = ctypes.CDLL("libcuda.so.1")
    h = ctypes.c_void_p()
    torch.cuda.synchronize(dev)
    assert lib.cuStreamCreate(ctypes.byref(h), 0) == 0
    own_blocking = torch.cuda.ExternalStream(h.value, device=dev)

    def on(stream, sync=False):
        def f(x):
            with torch.cuda.stream(stream):
                y = x * 2.0 + 1.0
                for _ in range(20):  # enough work to be still running when the caller reads
                    y = y * 1.0000001
            if sync:
                torch.cuda.synchronize(dev)
            return y
        return f

    cases = [
        ("current", lambda x: (x * 2.0 + 1.0) * 1.0000001 ** 20, "current"),
        ("legacy", on(torch.cuda.default_stream(dev)), "legacy_default"),
        ("nonblocking_own", on(own_nb), "side"),
        ("blocking_own", on(own_blocking), "side"),
        ("legacy_then_sync", on(torch.cuda.default_stream(dev), sync=True), "legacy_default"),
    ]
    o = {"tolerance": "magnitude", "rtol": 1e-2, "atol_scale": 1e-3}
    x = torch.randn(4096, 4096)
    ref = J.snapshot((x.to(dev) * 2.0 + 1.0) * 1.0000001 ** 20)
    fails = 0
    for name, fn, want in cases:
        r = J.stream_trial(fn, ref, [x], dev, o)
        ok = r["stream"] == want and (("cls" in r) == (want == "side"))
        fails += 0 if ok else 1
        print("%s %-18s stream %-15s want %-15s %s" % ("PASS" if ok else "FAIL", name, r["stream"], want,
                                                      r.get("detail", "")[:160]), flush=True)
    torch.cuda.synchronize(dev)
    lib.cuStreamDestroy_v2(h)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
