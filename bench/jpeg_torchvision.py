#!/usr/bin/python3
"""torchvision's side of `scripts/bench.sh jpeg-pipeline`: ImageFolder + transforms
(RandomResizedCrop(224), RandomHorizontalFlip(), ToTensor(), Normalize(ImageNet)) in a DataLoader
with num_workers = cores, batch 64, shuffled. Counts images/s after a warm-up (worker start-up
excluded). Usage: jpeg_torchvision.py IMAGE_DIR SECONDS WORKERS. Prints `torchvision_ips=<images/s>`.
Needs Debian's python3-torchvision (/usr/bin/python3).
"""
import sys
import time

import torch
from torchvision import datasets, transforms


def main():
    root, seconds, workers = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(1)
    transform = transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])
    dataset = datasets.ImageFolder(root, transform=transform)
    warmup = seconds * 0.1
    count = 0
    start = None
    loader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True,
                                         num_workers=workers, persistent_workers=True)
    while True:
        for images, _ in loader:
            now = time.perf_counter()
            if start is None:
                first = now  # Workers are up: warm-up runs from here.
                start = now
                continue
            if now - first < warmup:
                start = now
                continue
            count += images.shape[0]
            if now - start >= seconds:
                print("torchvision_ips=%.2f" % (count / (now - start)))
                return


if __name__ == "__main__":
    main()
