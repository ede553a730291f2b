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

RECIPE "detection", "clip" or "clip_bilinear" reads INPUTS as encoded scenes
(bench/recipe_scenes.h: JPEGs with boxes, labels and a caption; IMAGES is ignored) and starts
from the JPEG bytes
(torchvision.io.decode_jpeg). "detection" is the detection references' train transforms
(references/detection/transforms.py, written over the functional API as the references are):
RandomPhotometricDistort (without its channel permutation, which Stoker has no op for),
RandomZoomOut, RandomIoUCrop, RandomHorizontalFlip, then SanitizeBoundingBoxes' filter, resized
to 512x512 (a batch needs one shape) and converted to float32, boxes moved along. "clip" is
RandomResizedCrop(224, antialias=True), RandomHorizontalFlip, ConvertImageDtype, Normalize(CLIP's
mean and std), the caption passed through; "clip_bilinear" the same with antialias=False.
Needs Debian's python3-torchvision (/usr/bin/python3).
"""
import math
import sys
import time

import numpy as np
import torch
from torchvision import transforms as T
from torchvision.io import decode_jpeg
from torchvision.ops import box_iou
from torchvision.transforms import functional as F

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


def read_scenes(path):
    """[(jpeg uint8 tensor, boxes float32 N x 4, labels int64 N, caption)] (recipe_scenes.h)."""
    data, scenes, at = open(path, "rb").read(), [], 0

    def take(count, dtype):
        nonlocal at
        values = np.frombuffer(data, dtype=dtype, count=count, offset=at)
        at += values.nbytes
        return values

    while at < len(data):
        jpeg = torch.from_numpy(take(int(take(1, "<u4")[0]), np.uint8).copy())
        count = int(take(1, "<u4")[0])
        boxes = torch.from_numpy(take(count * 4, "<f4").copy()).reshape(count, 4)
        labels = torch.from_numpy(take(count, "<i8").copy())
        caption = take(int(take(1, "<u4")[0]), np.uint8).tobytes().decode()
        scenes.append((jpeg, boxes, labels, caption))
    return scenes


def photometric_distort(image, p=0.5):
    """references' RandomPhotometricDistort (v2's defaults), without the channel permutation."""
    r = torch.rand(6)
    if r[0] < p:
        image = F.adjust_brightness(image, float(torch.empty(1).uniform_(0.875, 1.125)))
    contrast_before = r[1] < 0.5
    if contrast_before and r[2] < p:
        image = F.adjust_contrast(image, float(torch.empty(1).uniform_(0.5, 1.5)))
    if r[3] < p:
        image = F.adjust_saturation(image, float(torch.empty(1).uniform_(0.5, 1.5)))
    if r[4] < p:
        image = F.adjust_hue(image, float(torch.empty(1).uniform_(-0.05, 0.05)))
    if not contrast_before and r[5] < p:
        image = F.adjust_contrast(image, float(torch.empty(1).uniform_(0.5, 1.5)))
    return image


def zoom_out(image, boxes, p=0.5, side_range=(1.0, 4.0)):
    """references' RandomZoomOut (fill 0)."""
    if torch.rand(1) >= p:
        return image, boxes
    _, orig_h, orig_w = image.shape
    r = side_range[0] + torch.rand(1) * (side_range[1] - side_range[0])
    canvas_w, canvas_h = int(orig_w * r), int(orig_h * r)
    r = torch.rand(2)
    left, top = int((canvas_w - orig_w) * r[0]), int((canvas_h - orig_h) * r[1])
    right, bottom = canvas_w - (left + orig_w), canvas_h - (top + orig_h)
    image = F.pad(image, [left, top, right, bottom], fill=0)
    return image, boxes + torch.tensor([left, top, left, top], dtype=boxes.dtype)


IOU_OPTIONS = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]


def iou_crop(image, boxes, labels, trials=40):
    """references' RandomIoUCrop (SSD): boxes centred outside the crop are dropped."""
    _, orig_h, orig_w = image.shape
    while True:
        min_iou = IOU_OPTIONS[int(torch.randint(len(IOU_OPTIONS), (1,)))]
        if min_iou >= 1.0:
            return image, boxes, labels
        for _ in range(trials):
            r = 0.3 + 0.7 * torch.rand(2)
            new_w, new_h = int(orig_w * r[0]), int(orig_h * r[1])
            if new_h == 0 or not 0.5 <= new_w / new_h <= 2.0:
                continue
            r = torch.rand(2)
            left, top = int((orig_w - new_w) * r[0]), int((orig_h - new_h) * r[1])
            right, bottom = left + new_w, top + new_h
            if left == right or top == bottom:
                continue
            cx, cy = 0.5 * (boxes[:, 0] + boxes[:, 2]), 0.5 * (boxes[:, 1] + boxes[:, 3])
            inside = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
            if not inside.any():
                continue
            kept = boxes[inside]
            window = torch.tensor([[left, top, right, bottom]], dtype=boxes.dtype)
            if box_iou(kept, window).max() < min_iou:
                continue
            kept = kept - torch.tensor([left, top, left, top], dtype=boxes.dtype)
            kept[:, 0::2].clamp_(0, new_w)
            kept[:, 1::2].clamp_(0, new_h)
            return F.crop(image, top, left, new_h, new_w), kept, labels[inside]


def detection(jpeg, boxes, labels, size=512, to_float=True):
    """The detection references' train transforms, then one size for the batch; float32 out, or
    uint8 without `to_float` (bench/e2e_torchvision.py's detection workload)."""
    image = photometric_distort(decode_jpeg(jpeg))
    image, boxes = zoom_out(image, boxes)
    image, boxes, labels = iou_crop(image, boxes, labels)
    _, h, w = image.shape
    if torch.rand(1) < 0.5:
        image = F.hflip(image)
        boxes = boxes[:, [2, 1, 0, 3]] * torch.tensor([-1, 1, -1, 1]) + torch.tensor([w, 0, w, 0])
    keep = (boxes[:, 2] - boxes[:, 0] >= 1) & (boxes[:, 3] - boxes[:, 1] >= 1)  # sanitize
    boxes, labels = boxes[keep], labels[keep]
    image = F.resize(image, [size, size], antialias=True)
    boxes = boxes * torch.tensor([size / w, size / h, size / w, size / h])
    if to_float:
        image = F.convert_image_dtype(image, torch.float32)
    return image, boxes, labels


CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]


def scene_main(recipe, path, batch_size, seconds):
    scenes = read_scenes(path)
    size = 512 if recipe == "detection" else 224
    antialias = recipe == "clip"  # "clip_bilinear": plain bilinear, as Stoker's there
    clip = T.Compose([T.RandomResizedCrop(224, antialias=antialias), T.RandomHorizontalFlip(),
                      T.ConvertImageDtype(torch.float32), T.Normalize(CLIP_MEAN, CLIP_STD)])
    batch = torch.empty(batch_size, 3, size, size, dtype=torch.float32)
    index = 0

    def one_batch():
        nonlocal index
        targets, captions = [], []
        for i in range(batch_size):
            jpeg, boxes, labels, caption = scenes[index % len(scenes)]
            if recipe == "detection":
                image, boxes, labels = detection(jpeg, boxes, labels, size)
                targets.append((boxes, labels))
            else:
                image = clip(decode_jpeg(jpeg))
                captions.append(caption)
            batch[i].copy_(image)
            index += 1

    return one_batch


def main():
    recipe, path = sys.argv[1], sys.argv[2]
    images, height, width, batch_size = (int(a) for a in sys.argv[3:7])
    seconds = float(sys.argv[7])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    if recipe in ("detection", "clip", "clip_bilinear"):
        time_round(scene_main(recipe, path, batch_size, seconds), batch_size, seconds)
        return
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

    time_round(one_batch, batch_size, seconds)


def time_round(one_batch, batch_size, seconds):
    """Warms up, then runs batches for `seconds`; prints the figures."""
    one_batch()
    images = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    elapsed = 0.0
    while elapsed < seconds:
        one_batch()
        images += batch_size
        elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    print("torchvision_ips=%.2f torchvision_cpu_ips=%.2f" % (images / elapsed, images / cpu))


if __name__ == "__main__":
    main()
