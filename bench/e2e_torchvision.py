#!/usr/bin/python3
"""torchvision's side of `scripts/bench.sh e2e` (bench/e2e.py runs it as a child process and
takes its CPU time from wait4, which includes the DataLoader's worker processes it joined).

    e2e_torchvision.py WORKERS BATCHES

The blur workload (DESIGN.md §6): random 224x224x3 uint8 images through
Compose([ToTensor()] + [GaussianBlur(11)] * 10) in a DataLoader with WORKERS worker processes
(one torch thread each), batch 64, float32 out, until BATCHES batches reached this loop (the same
boundary as stoker-bench-client: batches handed to the training loop, no training step).
Prints `images=N wall_seconds=S`.
"""
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

BATCH = 64


class RandomImages(Dataset):
    def __init__(self, count):
        self.count = count
        self.pipeline = transforms.Compose([transforms.ToTensor()] +
                                           [transforms.GaussianBlur(11)] * 10)

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        rng = np.random.default_rng(index)
        image = rng.integers(0, 256, size=(224, 224, 3), dtype=np.uint8)
        return self.pipeline(image), index % 1000


def init_worker(_):
    torch.set_num_threads(1)


def main():
    workers, batches = int(sys.argv[1]), int(sys.argv[2])
    torch.set_num_threads(1)
    loader = DataLoader(RandomImages(batches * BATCH), batch_size=BATCH, shuffle=True,
                        num_workers=workers, worker_init_fn=init_worker)
    start = time.perf_counter()
    images = 0
    for data, _ in loader:
        images += data.shape[0]
    wall = time.perf_counter() - start
    del loader  # joins the worker processes, so that wait4 counts their CPU
    print(f"images={images} wall_seconds={wall:.3f}")


if __name__ == "__main__":
    main()
