#!/usr/bin/python3
"""torchvision's side of `scripts/bench.sh augment-recipes`: one round of a recipe, one thread.

    augment_recipes_torchvision.py RECIPE INPUTS IMAGES HEIGHT WIDTH BATCH SECONDS

RECIPE is "timm" (RandomResizedCrop(224, antialias=True), RandomHorizontalFlip,
RandAugment(2, 9), ColorJitter(0.4, 0.4, 0.4), ConvertImageDtype(float32), Normalize(ImageNet),
RandomErasing(0.25)) or "deit" (the same, then per batch torchvision v2's MixUp(0.8) or CutMix(1.0)
with probability 1/2 each on 1000 classes). INPUTS holds IMAGES decoded uint8 HWC images of
HEIGHT x WIDTH x 3 back to back (written by augment_recipes_bench --write_inputs). Each image
goes in as a uint8 CHW tensor view of the decoded image and comes out as float32 normalized CHW
in its slot of a [BATCH, 3, 224, 224] batch tensor: the boundary Stoker's side has. Debian's
torchvision 0.14 has no transforms.v2, so MixUp/CutMix are v2's own tensor code (roll, mul,
add; the CutMix box formula) written out here. Prints `torchvision_ips=<images per wall-clock
second> torchvision_cpu_ips=<images per CPU second of the process>`.
Needs Debian's python3-torchvision (/usr/bin/python3).
"""
import math
import sys
import time

import numpy as np
import torch
from torchvision import transforms as T

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
NUM_CLASSES = 1000


def per_sample():
    return T.Compose([
        T.RandomResizedCrop(224, antialias=True),
        T.RandomHorizontalFlip(),
        T.RandAugment(num_ops=2, magnitude=9),
        T.ColorJitter(0.4, 0.4, 0.4),
        T.ConvertImageDtype(torch.float32),
        T.Normalize(MEAN, STD),
        T.RandomErasing(p=0.25),
    ])


def mixup_or_cutmix(batch, labels, beta_mixup, beta_cutmix):
    """torchvision v2 MixUp(0.8) / CutMix(1.0) (RandomChoice of the two): (images, labels)."""
    one_hot = torch.nn.functional.one_hot(labels, NUM_CLASSES).to(torch.float32)
    if torch.rand(()) < 0.5:
        lam = float(beta_mixup.sample(()))
        output = batch.roll(1, 0).mul_(1.0 - lam).add_(batch.mul(lam))
    else:
        lam = float(beta_cutmix.sample(()))
        H, W = batch.shape[-2:]
        r_x, r_y = int(torch.randint(W, size=(1,))), int(torch.randint(H, size=(1,)))
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half, r_h_half = int(r * W), int(r * H)
        x1, y1 = max(r_x - r_w_half, 0), max(r_y - r_h_half, 0)
        x2, y2 = min(r_x + r_w_half, W), min(r_y + r_h_half, H)
        rolled = batch.roll(1, 0)
        output = batch.clone()
        output[..., y1:y2, x1:x2] = rolled[..., y1:y2, x1:x2]
        lam = float(1.0 - (x2 - x1) * (y2 - y1) / (W * H))
    return output, one_hot.roll(1, 0).mul_(1.0 - lam).add_(one_hot.mul(lam))


def main():
    recipe, path = sys.argv[1], sys.argv[2]
    images, height, width, batch_size = (int(a) for a in sys.argv[3:7])
    seconds = float(sys.argv[7])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    decoded = np.fromfile(path, dtype=np.uint8).reshape(images, height, width, 3)
    inputs = [torch.from_numpy(decoded[i]).permute(2, 0, 1) for i in range(images)]
    transform = per_sample()
    batch = torch.empty(batch_size, 3, 224, 224, dtype=torch.float32)
    labels = torch.empty(batch_size, dtype=torch.int64)
    beta_mixup = torch.distributions.Beta(torch.tensor([0.8]), torch.tensor([0.8]))
    beta_cutmix = torch.distributions.Beta(torch.tensor([1.0]), torch.tensor([1.0]))
    index = 0

    def one_batch():
        nonlocal index
        for i in range(batch_size):
            batch[i].copy_(transform(inputs[index % images]))
            labels[i] = index % NUM_CLASSES
            index += 1
        if recipe == "deit":
            mixup_or_cutmix(batch, labels, beta_mixup, beta_cutmix)

    one_batch()  # warm-up
    index = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    elapsed = 0.0
    while elapsed < seconds:
        one_batch()
        elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    print("torchvision_ips=%.2f torchvision_cpu_ips=%.2f" % (index / elapsed, index / cpu))


if __name__ == "__main__":
    main()
