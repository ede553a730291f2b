#!/usr/bin/python3
"""torchvision's side of `scripts/bench.sh augment`: the blur reference workload
Compose([ToTensor()] + [GaussianBlur(11)] * 10) on random 224x224x3 uint8 images, one thread.
Prints `torchvision_ips=<images per second>`, per second of this thread's CPU time like
augment_bench (one torch thread: the work runs in this thread), or of wall-clock time with a
second argument `wall`. Needs Debian's python3-torchvision (/usr/bin/python3).
"""
import sys
import time

import numpy as np
import torch
from torchvision import transforms


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    clock = time.perf_counter if sys.argv[2:3] == ["wall"] else time.thread_time
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, size=(224, 224, 3), dtype=np.uint8) for _ in range(16)]
    pipeline = transforms.Compose([transforms.ToTensor()] + [transforms.GaussianBlur(11)] * 10)
    pipeline(images[0])  # Warm-up.
    count = 0
    start = clock()
    elapsed = 0.0
    while elapsed < seconds:
        pipeline(images[count % len(images)])
        count += 1
        elapsed = clock() - start
    print("torchvision_ips=%.2f" % (count / elapsed))


if __name__ == "__main__":
    main()
