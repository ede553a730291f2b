#!/usr/bin/python3
"""torchvision's side of `scripts/bench.sh e2e` (bench/e2e.py runs it as a child process).

    e2e_torchvision.py WORKLOAD WORKERS BATCHES [IMAGE_DIR [ANNOTATIONS]]

A DataLoader with WORKERS worker processes (one torch thread each), batch 64, until BATCHES
batches reached this loop (the boundary of stoker-bench-client: batches handed to the training
loop, no training step). WORKLOAD:
  blur          random 224x224x3 uint8 images, Compose([ToTensor()] + [GaussianBlur(11)] * 10),
                float32 out (the blur reference workload);
  jpeg-float32  IMAGE_DIR's JPEGs (one folder per class): decode_jpeg (libjpeg), then on the
                uint8 tensor RandomResizedCrop(224, antialias=False) (bilinear without
                antialiasing, the filter of Stoker's random_resized_crop), RandomHorizontalFlip,
                ConvertImageDtype(float32), Normalize(ImageNet): float32 CHW out;
  jpeg-float16  jpeg-float32, then ConvertImageDtype(float16): float16 CHW out;
  jpeg-uint8    the same up to the flip: uint8 out;
  detection-uint8  IMAGE_DIR's JPEGs with their boxes and categories from ANNOTATIONS (a COCO
                instances file): decode_jpeg, the detection references' train transforms as
                bench/augment_recipes_torchvision.py writes them (photometric distort, zoom out,
                IoU crop, flip, sanitize), resized to 512x512: uint8 images stacked, boxes and
                labels a list of tensors per batch, as the references' collate gives them.
The DataLoader's workers are persistent; the first WARMUP batches (worker start-up, imports)
are not counted, as Stoker's workers are running before its rounds start. Prints
`images=N wall_seconds=S cpu_seconds=C`, C being the CPU time (utime + stime, /proc) of this
process and its worker processes over the counted batches.
"""
import json
import os
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from torchvision.io import decode_jpeg, read_file

from augment_recipes_torchvision import detection

BATCH = 64
WARMUP = 2
TICK = os.sysconf("SC_CLK_TCK")
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


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


class Jpegs(Dataset):
    def __init__(self, root, out):
        classes = sorted(os.listdir(root))
        self.files = [(os.path.join(root, c, f), label) for label, c in enumerate(classes)
                      for f in sorted(os.listdir(os.path.join(root, c)))]
        steps = [transforms.RandomResizedCrop(224, antialias=False),
                 transforms.RandomHorizontalFlip()]
        if out != "uint8":
            steps += [transforms.ConvertImageDtype(torch.float32),
                      transforms.Normalize(MEAN, STD)]
        if out == "float16":
            steps.append(transforms.ConvertImageDtype(torch.float16))
        self.pipeline = transforms.Compose(steps)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        path, label = self.files[index]
        return self.pipeline(decode_jpeg(read_file(path))), label


class CocoScenes(Dataset):
    """A COCO instances file's images with their XYXY boxes and category ids."""

    def __init__(self, root, annotations):
        with open(annotations) as f:
            coco = json.load(f)
        boxes = {image["id"]: [] for image in coco["images"]}
        labels = {image["id"]: [] for image in coco["images"]}
        for a in coco["annotations"]:
            x, y, w, h = a["bbox"]
            boxes[a["image_id"]].append([x, y, x + w, y + h])
            labels[a["image_id"]].append(a["category_id"])
        self.items = [(os.path.join(root, image["file_name"]),
                       torch.tensor(boxes[image["id"]], dtype=torch.float32).reshape(-1, 4),
                       torch.tensor(labels[image["id"]], dtype=torch.int64))
                      for image in coco["images"]]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        path, boxes, labels = self.items[index]
        image, boxes, labels = detection(read_file(path), boxes, labels, to_float=False)
        return image, {"boxes": boxes, "labels": labels}


def collate_detection(samples):
    """One image tensor (every image is 512x512) and the list of target dicts."""
    return torch.stack([image for image, _ in samples]), [target for _, target in samples]


def tree_cpu_seconds():
    """utime + stime of this process and its children (the DataLoader's workers), seconds."""
    pids = [os.getpid()]
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            pids += [int(p) for p in f.read().split()]
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def init_worker(_):
    torch.set_num_threads(1)


def main():
    workload, workers, batches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(1)
    collate = None
    if workload == "blur":
        dataset = RandomImages((batches + WARMUP) * BATCH)
    elif workload == "detection-uint8":
        dataset, collate = CocoScenes(sys.argv[4], sys.argv[5]), collate_detection
    else:
        dataset = Jpegs(sys.argv[4], out=workload.split("-")[1])
    loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=workers,
                        worker_init_fn=init_worker, persistent_workers=True,
                        collate_fn=collate)
    images = 0
    for n, (data, _) in enumerate(loader):
        if n + 1 == WARMUP:
            start, cpu_start = time.perf_counter(), tree_cpu_seconds()
        elif n + 1 > WARMUP:
            images += data.shape[0]
        if n + 1 == WARMUP + batches:
            break
    wall, cpu = time.perf_counter() - start, tree_cpu_seconds() - cpu_start
    print(f"images={images} wall_seconds={wall:.3f} cpu_seconds={cpu:.3f}")


if __name__ == "__main__":
    main()
